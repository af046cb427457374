package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
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

// TestSplitGrammarMaxBytes checks that --all estimates what it will write
// and refuses above --max-bytes before writing anything: each split folder
// copies its records, and on a 5,000-record COVR pool --all once wrote 11 GB.
func TestSplitGrammarMaxBytes(t *testing.T) {
	dir := t.TempDir()
	g := filepath.Join(dir, "g.txt")
	os.WriteFile(g, []byte(splitGrammarFixture), 0o644)
	pool := filepath.Join(dir, "pool.jsonl")
	if _, err := runGenSCFGArgs("--grammar", g, "--n", "70", "--max-depth", "5", "--seed", "2", "--dedupe", "--out", pool); err != nil {
		t.Fatal(err)
	}
	// What --all writes under the default limit is the truth the estimate
	// must be near.
	ref := filepath.Join(dir, "ref")
	if _, errs, code := runCLI(t, "split", "grammar", "--in", pool, "--grammar", g, "--all", "--out", ref); code != 0 {
		t.Fatalf("--all: exit %d: %s", code, errs)
	}
	var written int64
	filepath.Walk(ref, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			written += fi.Size()
		}
		return nil
	})
	for _, tc := range []struct {
		name     string
		maxBytes string
		code     int
		want     string
	}{
		{"well under the estimate", strconv.FormatInt(written*3/4, 10), 1, "over --max-bytes"},
		{"a kibibyte", "1K", 1, "over --max-bytes 1.0 KiB"},
		{"well over the estimate", strconv.FormatInt(written*5/4, 10), 0, ""},
		{"suffix", "1G", 0, ""},
		{"not a size", "lots", 2, "--max-bytes"},
		{"zero", "0", 2, "positive size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			_, errs, code := runCLI(t, "split", "grammar", "--in", pool, "--grammar", g, "--all", "--out", out, "--max-bytes", tc.maxBytes)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errs)
			}
			if !strings.Contains(errs, tc.want) {
				t.Errorf("stderr %q lacks %q", errs, tc.want)
			}
			if tc.code != 0 {
				if tc.code == 1 && !strings.Contains(errs, "in all") {
					t.Errorf("stderr %q does not state the estimate", errs)
				}
				if got := outputs(t, out); len(got) > 0 {
					t.Errorf("a refused run wrote %v", got)
				}
			}
		})
	}
}

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"123", 123, true},
		{"4G", 4 << 30, true},
		{"1.5k", 1536, true},
		{"500MB", 500 << 20, true},
		{"2GiB", 2 << 30, true},
		{"", 0, false},
		{"-1G", 0, false},
		{"G", 0, false},
		{"4X", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var b byteSize
			err := b.Set(tc.in)
			if (err == nil) != tc.ok || (tc.ok && int64(b) != tc.want) {
				t.Errorf("Set(%q) = %d, %v; want %d, ok %v", tc.in, b, err, tc.want, tc.ok)
			}
		})
	}
	if s := byteSize(defaultMaxBytes); s.String() != "4G" {
		t.Errorf("default prints as %q, want 4G", s.String())
	}
}
