package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/scan"
	"compbench/provenance"
)

// scanCommands are SCAN commands for the CLI fixtures: enough variety for
// every method to find a split.
func scanCommands() []string {
	var cmds []string
	for _, v := range []string{"walk", "look", "run", "jump"} {
		for _, d := range []string{"", " left", " opposite right", " around left"} {
			for _, r := range []string{"", " twice", " thrice"} {
				cmds = append(cmds, v+d+r)
			}
		}
	}
	n := len(cmds)
	for i := 0; i < n; i += 3 {
		cmds = append(cmds, cmds[i]+" and "+cmds[(i*7+5)%n], cmds[(i*5+1)%n]+" after "+cmds[i])
	}
	return cmds
}

// writeSCAN writes the fixture commands as JSONL (ext ".jsonl") or in the
// original SCAN text format (ext ".txt") and returns the path.
func writeSCAN(t *testing.T, dir, ext string) string {
	t.Helper()
	var recs []data.Record
	for i, c := range scanCommands() {
		cmd, err := scan.Parse(c)
		if err != nil {
			t.Fatalf("fixture %q: %v", c, err)
		}
		r := cmd.TextRecord()           // the record a .txt line gives
		r.ID = "pool-" + splitItoa(i+1) // the ids the reader gives pool.txt
		recs = append(recs, r)
	}
	path := filepath.Join(dir, "pool"+ext)
	var b bytes.Buffer
	if ext == ".txt" {
		if err := scan.WriteText(&b, recs); err != nil {
			t.Fatal(err)
		}
	} else {
		enc := data.NewEncoder(&b)
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func splitItoa(i int) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[p:])
		}
	}
}

func writeSplitFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// outputs lists the files under dir (none when it does not exist).
func outputs(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestSplitCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeSCAN(t, dir, ".jsonl")
	empty := writeSplitFile(t, dir, "empty.jsonl", "")
	broken := writeSplitFile(t, dir, "broken.jsonl", "{\"id\":\"a\",\"input\":\"x\"}\n{not json\n")
	dup := writeSplitFile(t, dir, "dup.jsonl", "{\"id\":\"a\",\"input\":\"x\",\"output\":\"y\"}\n{\"id\":\"a\",\"input\":\"x\",\"output\":\"z\"}\n")
	badTxt := writeSplitFile(t, dir, "bad.txt", "IN: jump OUT: I_JUMP\nIN: jump twice OUT: I_WALK\n")
	noTree := writeSplitFile(t, dir, "notree.jsonl", "{\"id\":\"a\",\"input\":\"x\",\"output\":\"f(y\"}\n{\"id\":\"b\",\"input\":\"x\",\"output\":\"z)\"}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no method", []string{"split", "--in", good}, 2, "want one METHOD"},
		{"unknown method", []string{"split", "nope", "--in", good}, 2, "unknown method"},
		{"no --in", []string{"split", "random"}, 2, "--in and --out are required"},
		{"impossible fractions", []string{"split", "random", "--in", good, "--test-frac", "0.7", "--dev-frac", "0.5"}, 2, "exceed 1"},
		{"negative fraction", []string{"split", "mcd", "--in", good, "--test-frac", "-0.5"}, 2, "test fraction"},
		{"bad compound size", []string{"split", "mcd", "--in", good, "--max-compound", "1"}, 2, "--max-compound"},
		{"bad atom bound", []string{"split", "mcd", "--in", good, "--max-atom-div", "2"}, 2, "max atom divergence"},
		{"missing file", []string{"split", "random", "--in", filepath.Join(dir, "absent.jsonl")}, 1, "absent.jsonl"},
		{"empty file", []string{"split", "random", "--in", empty}, 1, "empty"},
		{"malformed json", []string{"split", "random", "--in", broken}, 1, "line 2"},
		{"repeated id", []string{"split", "random", "--in", dup}, 1, "repeats"},
		{"bad scan text", []string{"split", "random", "--in", badTxt}, 1, "line 2"},
		{"mcd without trees", []string{"split", "mcd", "--in", noTree, "--tree", "none"}, 2, "needs program trees"},
		{"mcd on unparsable programs", []string{"split", "mcd", "--in", noTree, "--tree", "bracketed"}, 1, "--skip-bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := append(append([]string{}, tc.args...), "--out", out)
			if tc.name == "no --in" {
				args = tc.args
			}
			_, errs, code := runCLI(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errs)
			}
			if !strings.Contains(errs, tc.msg) {
				t.Errorf("stderr %q lacks %q", errs, tc.msg)
			}
			if got := outputs(t, out); len(got) > 0 {
				t.Errorf("failed run left files %v", got)
			}
		})
	}
}

func TestSplitCLIDeterministicAndNoOverwrite(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".jsonl")
	for _, method := range []string{"random", "mcd", "tmcd"} {
		t.Run(method, func(t *testing.T) {
			a, b := filepath.Join(dir, method+"-a"), filepath.Join(dir, method+"-b")
			for _, out := range []string{a, b} {
				if _, errs, code := runCLI(t, "split", method, "--in", in, "--out", out, "--seed", "7"); code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
			}
			ja, err := os.ReadFile(filepath.Join(a, "split.json"))
			if err != nil {
				t.Fatal(err)
			}
			jb, err := os.ReadFile(filepath.Join(b, "split.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ja, jb) {
				t.Fatal("same seed gave different split.json bytes")
			}
			// A second run into the same folder must refuse and leave the
			// first result as it was.
			_, errs, code := runCLI(t, "split", method, "--in", in, "--out", a, "--seed", "8")
			if code != 1 || !strings.Contains(errs, "exists") {
				t.Fatalf("overwrite: exit %d, stderr %q", code, errs)
			}
			if again, _ := os.ReadFile(filepath.Join(a, "split.json")); !bytes.Equal(again, ja) {
				t.Fatal("refused run changed split.json")
			}
			if _, errs, code := runCLI(t, "split", method, "--in", in, "--out", a, "--seed", "8", "--force"); code != 0 {
				t.Fatalf("--force: exit %d: %s", code, errs)
			}
		})
	}
}

// TestSplitCLISCANText checks that the original SCAN text format is read
// with its rule trees: the split of a .txt pool equals that of the JSONL.
func TestSplitCLISCANText(t *testing.T) {
	dir := t.TempDir()
	txt, js := writeSCAN(t, dir, ".txt"), writeSCAN(t, dir, ".jsonl")
	var got [2][]byte
	for i, in := range []string{txt, js} {
		out := filepath.Join(dir, "out"+splitItoa(i))
		if _, errs, code := runCLI(t, "split", "mcd", "--in", in, "--out", out); code != 0 {
			t.Fatalf("%s: exit %d: %s", in, code, errs)
		}
		b, err := os.ReadFile(filepath.Join(out, "split.json"))
		if err != nil {
			t.Fatal(err)
		}
		got[i] = b
	}
	// params.pool and the provenance name each input file; the rest must
	// agree.
	pool := regexp.MustCompile(`"pool":"[^"]*"|(?m)^ "provenance": .*$`)
	if !bytes.Equal(pool.ReplaceAll(got[0], nil), pool.ReplaceAll(got[1], nil)) {
		t.Error("SCAN text and JSONL pools gave different splits")
	}
}

// TestSplitProvenance: split.json records the build, the command line and
// the size and SHA-256 of the pool, and stats --split still reads it.
func TestSplitProvenance(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".jsonl")
	out := filepath.Join(dir, "r")
	mustRun(t, "split", "random", "--in", in, "--out", out, "--seed", "1")
	raw, err := os.ReadFile(filepath.Join(out, "split.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Provenance provenance.Record `json:"provenance"`
	}
	if err := json.Unmarshal(raw, &sj); err != nil {
		t.Fatal(err)
	}
	want, err := provenance.Hash("in", in)
	if err != nil {
		t.Fatal(err)
	}
	p := sj.Provenance
	if len(p.Inputs) != 1 || p.Inputs[0] != want || p.Build.Go == "" || len(p.Command) == 0 {
		t.Fatalf("provenance %+v, want the pool %+v", p, want)
	}
	mustRun(t, "stats", "--split", out)
}
