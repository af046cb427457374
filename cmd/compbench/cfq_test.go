package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

const cfqFixture = `[
 {"questionPatternModEntities": "Did M0 direct M1?", "sparqlPatternModEntities": "SELECT count(*) WHERE {\n?x0 ns:film.director.film M1\n}", "ruleTree": {"ruleId": "A", "subTree": [{"ruleId": "B"}]}, "question": "q0", "sparql": "s0"},
 {"questionPatternModEntities": "Who edited M0", "sparqlPatternModEntities": "SELECT DISTINCT ?x0 WHERE {\n?x0 ns:film.editor.film ns:m.0ab\n}", "ruleTree": {"ruleId": "A"}, "question": "q1", "sparql": "s1"},
 {"questionPatternModEntities": "Was M0 a film", "sparqlPatternModEntities": "SELECT count(*) WHERE {\nM0 a ns:film.film\n}", "ruleTree": {"ruleId": "C"}, "question": "q2", "sparql": "s2"},
 {"questionPatternModEntities": "Who wrote M0", "sparqlPatternModEntities": "SELECT DISTINCT ?x0 WHERE {\n?x0 ns:film.writer.film M0\n}", "ruleTree": {"ruleId": "A"}, "question": "q3", "sparql": "s3"}
]`

func runCFQArgs(args ...string) (string, error) {
	var out, errb bytes.Buffer
	err := runCFQ(context.Background(), args, &out, &errb)
	return out.String(), err
}

func cfqWriteFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func cfqIDs(t *testing.T, path string) string {
	t.Helper()
	recs, err := data.ReadRecords(path)
	if err != nil {
		if strings.Contains(err.Error(), "no records") {
			return ""
		}
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return strings.Join(out, " ")
}

// The pipelines are data/cfq's (Import, ImportText, ExportSplit, tested
// there); this checks what the commands print of their summaries.
func TestCFQStdout(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "dataset.json")
	cfqWriteFile(t, ds, cfqFixture)
	sp := filepath.Join(dir, "split.json")
	cfqWriteFile(t, sp, `{"trainIdxs": [0, 3], "devIdxs": [], "testIdxs": [2]}`)
	out, parts, text := filepath.Join(dir, "data.jsonl"), filepath.Join(dir, "mcd"), filepath.Join(dir, "text")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"import", []string{"import", "--in", ds, "--out", out, "--split", sp, "--out-dir", parts},
			"wrote 4 records to " + out + "\nwrote split to " + parts + ": train 2, dev 0, test 1 (of 4 examples)\n"},
		{"export-split", []string{"export-split", "--pool", out, "--dir", parts, "--out", filepath.Join(dir, "back.json")},
			"wrote " + filepath.Join(dir, "back.json") + ": train 2, dev 0, test 1\n"},
		{"import --text", []string{"import", "--text", cfqMCD1, "--out-dir", text, "--out", filepath.Join(text, "all.jsonl")},
			"wrote 9 records to " + filepath.Join(text, "all.jsonl") + "\nwrote split to " + text + ": train 3, dev 3, test 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, err := runCFQArgs(tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != tc.want {
				t.Errorf("stdout %q, want %q", stdout, tc.want)
			}
		})
	}
	if got := cfqIDs(t, filepath.Join(parts, "train.jsonl")); got != "cfq-0 cfq-3" {
		t.Errorf("train ids %q", got)
	}
}

func TestCFQImportErrors(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "dataset.json")
	cfqWriteFile(t, ds, cfqFixture)
	bad := filepath.Join(dir, "bad.json")
	cfqWriteFile(t, bad, `[{"questionPatternModEntities": "a"}]`)
	far := filepath.Join(dir, "far.json")
	cfqWriteFile(t, far, `{"trainIdxs": [0], "testIdxs": [9]}`)
	dup := filepath.Join(dir, "dup.json")
	cfqWriteFile(t, dup, `{"trainIdxs": [0], "testIdxs": [0]}`)
	out := filepath.Join(dir, "o")
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no subcommand", nil, true, "no subcommand"},
		{"unknown subcommand", []string{"frob"}, true, "unknown subcommand"},
		{"no in", []string{"import", "--out", out + ".jsonl"}, true, "--in is required"},
		{"no outputs", []string{"import", "--in", ds}, true, "give --out"},
		{"split without dir", []string{"import", "--in", ds, "--out", out + ".jsonl", "--split", far}, true, "go together"},
		{"keep reserved", []string{"import", "--in", ds, "--out", out + ".jsonl", "--keep", "id"}, true, "record field"},
		{"missing field", []string{"import", "--in", bad, "--out", out + ".jsonl"}, false, `no "sparqlPatternModEntities" field`},
		{"index out of range", []string{"import", "--in", ds, "--split", far, "--out-dir", out}, false, "test index 9 is out of range: the data has 4 examples"},
		{"index twice", []string{"import", "--in", ds, "--split", dup, "--out-dir", out}, false, "index 0 is in train and test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCFQArgs(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error = %v, want %v", !tc.usage, tc.usage)
			}
			for _, p := range []string{out + ".jsonl", filepath.Join(out, "train.jsonl")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("a failed run left %s", p)
				}
			}
		})
	}
}
