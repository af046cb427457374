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

const splitGrammarFixture = `answer -> boolean_single | boolean_pair
boolean_pair -> 'and' '(' boolean_single ',' boolean_single ')' & 'both' boolean_single 'and' boolean_single
boolean_pair -> 'or' '(' boolean_single ',' boolean_single ')' & 'either' boolean_single 'or' boolean_single
boolean_single -> 'exists' '(' ref ')' & 'there is' ref
boolean_single -> 'none' '(' ref ')' & 'there is no' ref
ref -> 'dog' | 'cat' | 'mouse'
`

func TestSplitGrammar(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g.txt")
	os.WriteFile(g, []byte(splitGrammarFixture), 0o644)
	pool := filepath.Join(dir, "pool.jsonl")
	if _, err := runGenSCFGArgs("--grammar", g, "--n", "70", "--max-depth", "5", "--seed", "2", "--dedupe", "--out", pool); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"split", "grammar"}, args...), &out, &errb)
		return out.String(), err
	}
	list, err := run("--in", pool, "--grammar", g, "--list")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list, "candidate splits") || !strings.Contains(list, "yes") {
		t.Fatalf("list:\n%s", list)
	}
	// Find a valid and an invalid candidate from the listing.
	valid, invalid := "", ""
	for _, line := range strings.Split(list, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if f[1] == "yes" && valid == "" {
			valid = f[0]
		}
		if f[1] == "no" && invalid == "" {
			invalid = f[0]
		}
	}
	out := filepath.Join(dir, "one")
	if _, err := run("--in", pool, "--grammar", g, "--index", valid, "--out", out, "--dev-frac", "0.1"); err != nil {
		t.Fatal(err)
	}
	recs, err := data.ReadRecords(filepath.Join(out, "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("empty test set")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "split.json")); !bytes.Contains(b, []byte(`"method": "grammar"`)) {
		t.Errorf("split.json:\n%s", b)
	}
	if _, err := run("--in", pool, "--grammar", g, "--index", valid, "--out", out); err == nil {
		t.Error("existing split: want an error without --force")
	}
	all := filepath.Join(dir, "all")
	sum, err := run("--in", pool, "--grammar", g, "--all", "--out", all)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(all, valid, "split.json")); err != nil {
		t.Errorf("--all did not write split %s: %v\n%s", valid, err, sum)
	}
	if _, err := os.Stat(filepath.Join(all, invalid)); err == nil {
		t.Errorf("--all wrote invalid split %s", invalid)
	}

	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no mode", []string{"--in", pool, "--grammar", g}, true, "exactly one of"},
		{"two modes", []string{"--in", pool, "--grammar", g, "--list", "--all", "--out", dir}, true, "exactly one of"},
		{"no out", []string{"--in", pool, "--grammar", g, "--index", "0"}, true, "--out is required"},
		{"bad dev", []string{"--in", pool, "--grammar", g, "--list", "--dev-frac", "1.5"}, true, "dev fraction"},
		{"out of range", []string{"--in", pool, "--grammar", g, "--index", "100000", "--out", filepath.Join(dir, "x")}, true, "out of range"},
		{"invalid split", []string{"--in", pool, "--grammar", g, "--index", invalid, "--out", filepath.Join(dir, "x")}, false, "is invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error = %v, want %v", !tc.usage, tc.usage)
			}
			if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
				t.Error("a failed run left output")
			}
		})
	}
}
