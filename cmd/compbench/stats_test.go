package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStatsCLI(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".jsonl")
	out := filepath.Join(dir, "split")
	// Train and test cover the pool, so stats sees the pool the split
	// weighed its compounds on.
	if _, errs, code := runCLI(t, "split", "random", "--in", in, "--out", out); code != 0 {
		t.Fatalf("split: exit %d: %s", code, errs)
	}
	train, test := filepath.Join(out, "train.jsonl"), filepath.Join(out, "test.jsonl")

	t.Run("json matches split.json", func(t *testing.T) {
		stdout, errs, code := runCLI(t, "stats", "--train", train, "--test", test, "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("stats --json printed %q: %v", stdout, err)
		}
		raw, err := os.ReadFile(filepath.Join(out, "split.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sj struct {
			Stats map[string]any `json:"stats"`
		}
		if err := json.Unmarshal(raw, &sj); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"atom_divergence", "compound_divergence", "compound_divergence_unweighted"} {
			g, _ := got[k].(float64)
			w, ok := sj.Stats[k].(float64)
			if !ok || math.Abs(g-w) > 1e-9 { // sums run in another order
				t.Errorf("%s: stats says %v, split.json %v", k, got[k], sj.Stats[k])
			}
		}
	})
	t.Run("text", func(t *testing.T) {
		stdout, errs, code := runCLI(t, "stats", "--train", train, "--test", test)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if !strings.Contains(stdout, "compound") {
			t.Errorf("text stats lack the compound divergence: %q", stdout)
		}
	})

	empty := writeSplitFile(t, dir, "empty.jsonl", "")
	broken := writeSplitFile(t, dir, "broken.jsonl", "{\"id\":\"a\"\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no files", []string{"stats"}, 2, "--train and --test are required"},
		{"stray argument", []string{"stats", "--train", train, "--test", test, "extra"}, 2, "unexpected argument"},
		{"bad compound size", []string{"stats", "--train", train, "--test", test, "--max-compound", "99"}, 2, "--max-compound"},
		{"bad tree kind", []string{"stats", "--train", train, "--test", test, "--tree", "oak"}, 2, "--tree"},
		{"empty train", []string{"stats", "--train", empty, "--test", test}, 1, "empty"},
		{"malformed test", []string{"stats", "--train", train, "--test", broken}, 1, "broken.jsonl"},
		{"missing file", []string{"stats", "--train", filepath.Join(dir, "absent.jsonl"), "--test", test}, 1, "absent.jsonl"},
		{"bad atom count", []string{"stats", "--train", train, "--test", test, "--atoms", "twice"}, 2, "--atoms"},
		{"record not in pool", []string{"stats", "--train", train, "--test", test, "--pool", train}, 1, "is not in the pool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errs, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.code, errs)
			}
			if !strings.Contains(errs, tc.msg) {
				t.Errorf("stderr %q lacks %q", errs, tc.msg)
			}
			if code != 0 && stdout != "" {
				t.Errorf("failed run printed %q", stdout)
			}
		})
	}
}

// TestStatsSplitAgrees: stats --split recomputes every method's statistics
// over the split's pool, equal to split.json's, where the bare train/test
// pair of a split that leaves examples out gives an estimate, so labelled.
func TestStatsSplitAgrees(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".jsonl")
	for _, method := range []string{"random", "length", "mcd", "tmcd"} {
		t.Run(method, func(t *testing.T) {
			out := filepath.Join(dir, method)
			if _, errs, code := runCLI(t, "split", method, "--in", in, "--out", out, "--seed", "3"); code != 0 {
				t.Fatalf("split: exit %d: %s", code, errs)
			}
			stdout, errs, code := runCLI(t, "stats", "--split", out, "--json")
			if code != 0 || strings.Contains(errs, "differs") {
				t.Fatalf("stats --split: exit %d: %s", code, errs)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(out, "split.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sj struct {
				Params struct {
					MaxSize int `json:"compound_max_size"`
					Keep    int `json:"compound_keep"`
				} `json:"params"`
				Stats map[string]any `json:"stats"`
			}
			if err := json.Unmarshal(raw, &sj); err != nil {
				t.Fatal(err)
			}
			for k, w := range sj.Stats {
				if fmt.Sprint(got[k]) != fmt.Sprint(w) {
					t.Errorf("%s: stats --split %v, split.json %v", k, got[k], w)
				}
			}
			if got["compound_weights_over"] != "pool" {
				t.Errorf("weights over %v, want pool", got["compound_weights_over"])
			}
			pair, errs, code := runCLI(t, "stats", "--train", filepath.Join(out, "train.jsonl"), "--test", filepath.Join(out, "test.jsonl"), "--json")
			if code != 0 {
				t.Fatalf("stats pair: exit %d: %s", code, errs)
			}
			if !strings.Contains(pair, `"compound_weights_over": "train+test"`) {
				t.Errorf("a bare pair's estimate is not labelled: %s", pair)
			}
			// With --pool the pair is measured as the split measured it.
			over, errs, code := runCLI(t, "stats", "--train", filepath.Join(out, "train.jsonl"), "--test", filepath.Join(out, "test.jsonl"), "--pool", in, "--json",
				"--max-compound", fmt.Sprint(sj.Params.MaxSize), "--keep-compounds", fmt.Sprint(sj.Params.Keep))
			if code != 0 {
				t.Fatalf("stats --pool: exit %d: %s", code, errs)
			}
			var viaPool map[string]any
			if err := json.Unmarshal([]byte(over), &viaPool); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"atom_divergence", "compound_divergence", "compound_divergence_unweighted", "output_pattern_coverage", "output_length_ratio"} {
				g, _ := viaPool[k].(float64)
				w, ok := sj.Stats[k].(float64)
				if !ok || math.Abs(g-w) > 1e-9 { // sums run in another order
					t.Errorf("%s: stats --pool %v, split.json %v", k, viaPool[k], sj.Stats[k])
				}
			}
		})
	}
	if _, errs, code := runCLI(t, "stats", "--split", filepath.Join(dir, "mcd"), "--train", in); code != 2 {
		t.Errorf("--split with --train: exit %d (%s), want a usage error", code, errs)
	}
}
