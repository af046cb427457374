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

const testGrammar = `answer -> 'exists' '(' ref ')' & 'there is' ref
ref -> 'find' '(' noun ')' & noun | 'filter' '(' color ',' ref ')' & color ref
noun -> 'dog' | 'cat'
color -> 'black' | 'white'
`

func runGenSCFGArgs(args ...string) (string, error) {
	var out, errb bytes.Buffer
	err := runGenSCFG(context.Background(), args, &out, &errb)
	return out.String(), err
}

func TestGenSCFG(t *testing.T) {
	dir := t.TempDir()
	gpath := filepath.Join(dir, "g.txt")
	if err := os.WriteFile(gpath, []byte(testGrammar), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "d.jsonl")
	if _, err := runGenSCFGArgs("--grammar", gpath, "--n", "30", "--max-depth", "4", "--seed", "5", "--out", out); err != nil {
		t.Fatal(err)
	}
	recs, err := data.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 {
		t.Fatalf("%d records, want 30", len(recs))
	}
	for _, r := range recs {
		if r.Tree == nil || !strings.HasPrefix(r.Output, "exists ( ") || !strings.HasPrefix(r.Input, "there is ") {
			t.Fatalf("bad record %+v", r)
		}
	}
	first, _ := os.ReadFile(out)
	if _, err := runGenSCFGArgs("--grammar", gpath, "--n", "30", "--max-depth", "4", "--seed", "5", "--out", out); err == nil {
		t.Error("existing output: want an error without --force")
	}
	if _, err := runGenSCFGArgs("--grammar", gpath, "--n", "30", "--max-depth", "4", "--seed", "5", "--out", out, "--force"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(first, again) {
		t.Error("same seed gave different bytes")
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("s -> t\n"), 0o644)
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no grammar", []string{"--out", filepath.Join(dir, "x.jsonl")}, true, "--grammar and --out are required"},
		{"bad n", []string{"--grammar", gpath, "--out", filepath.Join(dir, "x.jsonl"), "--n", "0"}, true, "n must be at least 1"},
		{"undefined", []string{"--grammar", bad, "--out", filepath.Join(dir, "x.jsonl")}, false, "line 1: undefined non-terminal \"t\""},
		{"too shallow", []string{"--grammar", gpath, "--out", filepath.Join(dir, "x.jsonl"), "--max-depth", "2"}, false, "max depth 2 is too small"},
		{"dedupe exhausted", []string{"--grammar", gpath, "--out", filepath.Join(dir, "x.jsonl"), "--max-depth", "3", "--n", "100", "--dedupe"}, false, "distinct examples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runGenSCFGArgs(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ue *usageError
			if isUsage := errors.As(err, &ue); isUsage != tc.usage {
				t.Errorf("usage error = %v, want %v", isUsage, tc.usage)
			}
			if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); err == nil {
				t.Error("a failed run left an output file")
			}
		})
	}
}
