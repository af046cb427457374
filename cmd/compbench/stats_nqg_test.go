package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geoExcerpt is the first 16 lines of train.tsv and test.tsv of NQG's
// published GeoQuery tmcd_1 split (see its README.md).
var geoExcerpt = filepath.Join("..", "..", "data", "testdata", "geoquery")

// statsJSON runs stats with args plus --json and decodes the result.
func statsJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	stdout, errs, code := runCLI(t, append(append([]string{"stats"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("stats %v: exit %d: %s", args, code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stats --json printed %q: %v", stdout, err)
	}
	return got
}

// TestStatsNQG: --measure nqg on the GeoQuery excerpt gives NQG's numbers.
// The expected values come from NQG's definition evaluated on the same two
// files outside compbench (compounds counted per occurrence, atoms as the
// set of each program's tokens other than brackets and commas).
func TestStatsNQG(t *testing.T) {
	train, test := filepath.Join(geoExcerpt, "train.tsv"), filepath.Join(geoExcerpt, "test.tsv")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"bracketed", []string{"--tree", "bracketed"}},
		{"auto", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statsJSON(t, append([]string{"--train", train, "--test", test, "--measure", "nqg"}, tc.args...)...)
			wantDC, wantDA := 0.31250771625207685, 0.11481405039285464
			for k, want := range map[string]float64{"compound_divergence": wantDC, "compound_divergence_unweighted": wantDC, "atom_divergence": wantDA} {
				if g, ok := got[k].(float64); !ok || math.Abs(g-want) > 1e-12 {
					t.Errorf("%s = %v, want %v", k, got[k], want)
				}
			}
			if got["compound_measure"] != "nqg" || got["compound_weights_over"] != nil {
				t.Errorf("measure %v, weights over %v: want nqg and none", got["compound_measure"], got["compound_weights_over"])
			}
		})
	}
	t.Run("missing atoms", func(t *testing.T) {
		got := statsJSON(t, "--train", train, "--test", test, "--measure", "nqg")
		b, _ := json.Marshal(got["test_atoms_missing_from_train"])
		if want := `["len","loc_1","lowest","most","smallest_one","traverse_2"]`; string(b) != want {
			t.Errorf("missing atoms %s, want %s", b, want)
		}
	})
	t.Run("text", func(t *testing.T) {
		stdout, errs, code := runCLI(t, "stats", "--train", train, "--test", test, "--measure", "nqg")
		if code != 0 || !strings.Contains(stdout, "compound div.      0.3125 (NQG's") {
			t.Errorf("exit %d: %s%s", code, stdout, errs)
		}
	})
	t.Run("keysers default", func(t *testing.T) {
		got := statsJSON(t, "--train", train, "--test", test)
		if got["compound_measure"] != nil || got["compound_weights_over"] != "train+test" {
			t.Errorf("default measure reads as %v over %v", got["compound_measure"], got["compound_weights_over"])
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown measure", []string{"--measure", "shaw"}, `--measure "shaw": want keysers or nqg`},
		{"nqg with a size", []string{"--measure", "nqg", "--max-compound", "3"}, "drop --max-compound"},
		{"nqg with a selection", []string{"--measure", "nqg", "--keep-compounds", "0", "--max-compound", "2"}, "drop --keep-compounds and --max-compound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errs, code := runCLI(t, append([]string{"stats", "--train", train, "--test", test}, tc.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, errs, tc.msg)
			}
		})
	}
}

// TestSplitTMCDNQG: split tmcd --measure nqg records the measure in
// split.json, stats --split recomputes the same numbers, and stats on the
// written files agrees (NQG's compounds need no pool).
func TestSplitTMCDNQG(t *testing.T) {
	dir := t.TempDir()
	pool := filepath.Join(dir, "geo.tsv")
	var lines []byte
	for _, f := range []string{"train.tsv", "test.tsv"} {
		b, err := os.ReadFile(filepath.Join(geoExcerpt, f))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b...)
	}
	if err := os.WriteFile(pool, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tmcd")
	if _, errs, code := runCLI(t, "split", "tmcd", "--in", pool, "--out", out, "--measure", "nqg", "--test-frac", "0.5", "--seed", "1"); code != 0 {
		t.Fatalf("split: exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(filepath.Join(out, "split.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Params map[string]any `json:"params"`
		Stats  map[string]any `json:"stats"`
	}
	if err := json.Unmarshal(raw, &sj); err != nil {
		t.Fatal(err)
	}
	if sj.Params["compound_measure"] != "nqg" || sj.Params["compound_max_size"] != 2.0 || sj.Stats["compound_measure"] != "nqg" {
		t.Fatalf("split.json params %v, stats %v", sj.Params, sj.Stats)
	}
	if sj.Stats["test_atoms_missing_from_train"] == nil || len(sj.Stats["test_atoms_missing_from_train"].([]any)) != 0 {
		t.Errorf("tmcd left test atoms missing from train: %v", sj.Stats["test_atoms_missing_from_train"])
	}
	for name, got := range map[string]map[string]any{
		"--split":          statsJSON(t, "--split", out),
		"--train --test":   statsJSON(t, "--train", filepath.Join(out, "train.jsonl"), "--test", filepath.Join(out, "test.jsonl"), "--measure", "nqg"),
		"--pool, as split": statsJSON(t, "--train", filepath.Join(out, "train.jsonl"), "--test", filepath.Join(out, "test.jsonl"), "--measure", "nqg", "--pool", pool),
	} {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{"compound_divergence", "atom_divergence"} {
				g, _ := got[k].(float64)
				w, ok := sj.Stats[k].(float64)
				if !ok || math.Abs(g-w) > 1e-9 {
					t.Errorf("%s: stats %v, split.json %v", k, got[k], sj.Stats[k])
				}
			}
		})
	}
	t.Run("refuses a size", func(t *testing.T) {
		_, errs, code := runCLI(t, "split", "tmcd", "--in", pool, "--out", filepath.Join(dir, "x"), "--measure", "nqg", "--max-compound", "4")
		if code != 2 || !strings.Contains(errs, "drop --max-compound") {
			t.Errorf("exit %d: %s", code, errs)
		}
	})
}
