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

func TestCFQImportAndExport(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "dataset.json")
	cfqWriteFile(t, ds, cfqFixture)
	sp := filepath.Join(dir, "split.json")
	cfqWriteFile(t, sp, `{"trainIdxs": [0, 3], "devIdxs": [], "testIdxs": [2]}`)
	out := filepath.Join(dir, "data.jsonl")
	parts := filepath.Join(dir, "mcd")
	if _, err := runCFQArgs("import", "--in", ds, "--out", out, "--split", sp, "--out-dir", parts); err != nil {
		t.Fatal(err)
	}
	recs, err := data.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0].Input != "Did M0 direct M1 ?" || recs[1].Output != "SELECT DISTINCT ?x0 WHERE { ?x0 film.editor.film m_0ab }" {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Extra["ruleTree"] == nil || recs[0].Extra["question"] != nil {
		t.Errorf("extra %v: want the default kept fields", recs[0].Extra)
	}
	for part, want := range map[string]string{"train": "cfq-0 cfq-3", "dev": "", "test": "cfq-2"} {
		if got := cfqIDs(t, filepath.Join(parts, part+".jsonl")); got != want {
			t.Errorf("%s ids %q, want %q", part, got, want)
		}
	}
	// Round trip: the folder written back as a split file gives the same indexes.
	back := filepath.Join(dir, "back.json")
	if _, err := runCFQArgs("export-split", "--pool", out, "--dir", parts, "--out", back); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(back)
	if want := "{\n  \"trainIdxs\": [0, 3],\n  \"devIdxs\": [],\n  \"testIdxs\": [2]\n}\n"; string(b) != want {
		t.Errorf("exported %q, want %q", b, want)
	}
	// JSONL input with the same split (SCAN MCD style: indexes count records).
	parts2 := filepath.Join(dir, "again")
	if _, err := runCFQArgs("import", "--in", out, "--split", back, "--out-dir", parts2); err != nil {
		t.Fatal(err)
	}
	if got := cfqIDs(t, filepath.Join(parts2, "train.jsonl")); got != "cfq-0 cfq-3" {
		t.Errorf("jsonl import train %q", got)
	}
}

func TestCFQImportSCAN(t *testing.T) {
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.txt")
	cfqWriteFile(t, tasks, "IN: jump OUT: I_JUMP\nIN: walk twice OUT: I_WALK I_WALK\nIN: look OUT: I_LOOK\n")
	sp := filepath.Join(dir, "mcd1.json")
	cfqWriteFile(t, sp, `{"trainIdxs": [0, 2], "devIdxs": [], "testIdxs": [1]}`)
	if _, err := runCFQArgs("import", "--in", tasks, "--split", sp, "--out-dir", filepath.Join(dir, "s")); err != nil {
		t.Fatal(err)
	}
	// Ids are the file's stem and line number, as every reader gives them.
	if got := cfqIDs(t, filepath.Join(dir, "s", "test.jsonl")); got != "tasks-2" {
		t.Errorf("test ids %q, want tasks-2", got)
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
