package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"compbench/provenance"
)

// provLine is one line of a run's provenance.jsonl.
type provLine struct {
	StartStep int `json:"start_step"`
	provenance.Record
}

func readProvenance(t *testing.T, run string) []provLine {
	t.Helper()
	f, err := os.Open(filepath.Join(run, "provenance.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []provLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l provLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// TestRunProvenance: a run folder logs every invocation that wrote it,
// with the build, the command line and its inputs' fingerprints.
func TestRunProvenance(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	want, err := provenance.Hash("train", data)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	mustRun(t, trainArgs(data, run, "cpu", "4")...)
	mustRun(t, trainArgs(data, run, "cpu", "6", "--resume")...)
	ft := filepath.Join(dir, "ft")
	mustRun(t, "finetune", "--run", run, "--data", data, "--steps", "1", "--out", ft)
	cases := []struct {
		name      string
		run       string
		lines     int
		startStep []int
		roles     []string
	}{
		{"train then resume", run, 2, []int{0, 4}, []string{"train", "dev"}},
		{"finetune", ft, 1, []int{0}, []string{"run-weights", "data"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := readProvenance(t, c.run)
			if len(lines) != c.lines {
				t.Fatalf("%d lines, want %d", len(lines), c.lines)
			}
			for i, l := range lines {
				if l.StartStep != c.startStep[i] || l.Build.Go == "" || len(l.Command) == 0 || len(l.Inputs) != len(c.roles) {
					t.Fatalf("line %d: %+v", i+1, l)
				}
				for k, role := range c.roles {
					if l.Inputs[k].Role != role || l.Inputs[k].SHA256 == "" {
						t.Fatalf("line %d input %d: %+v, want role %s", i+1, k, l.Inputs[k], role)
					}
				}
			}
			if c.roles[0] == "train" && (lines[0].Inputs[0].SHA256 != want.SHA256 || lines[0].Inputs[0].Size != want.Size) {
				t.Fatalf("train input %+v, want %+v", lines[0].Inputs[0], want)
			}
		})
	}
}
