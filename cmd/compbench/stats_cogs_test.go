package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStatsCOGS: stats reads COGS's logical forms as trees (auto picks the
// cogs kind), so the divergences of train against gen are numbers.
func TestStatsCOGS(t *testing.T) {
	train, gen := filepath.Join(cogsExcerpt, "train.tsv"), filepath.Join(cogsExcerpt, "gen.tsv")
	auto := statsJSON(t, "--train", train, "--test", gen)
	for _, k := range []string{"atom_divergence", "compound_divergence", "compound_divergence_unweighted"} {
		if v, ok := auto[k].(float64); !ok || v <= 0 || v > 1 {
			t.Errorf("%s = %v, want a divergence in (0, 1]", k, auto[k])
		}
	}
	// Words and a relation of the gen excerpt that its train excerpt lacks
	// (checked by hand against train.tsv).
	var missing []string
	b, _ := json.Marshal(auto["test_atoms_missing_from_train"])
	if err := json.Unmarshal(b, &missing); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"princess", "Jaxon", "ccomp"} {
		if !slices.Contains(missing, w) {
			t.Errorf("missing atoms %v lack %q", missing, w)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"--tree cogs", []string{"--tree", "cogs"}},
		{"--measure nqg", []string{"--measure", "nqg"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statsJSON(t, append([]string{"--train", train, "--test", gen}, tc.args...)...)
			if tc.name == "--tree cogs" {
				a, _ := json.Marshal(auto)
				g, _ := json.Marshal(got)
				if string(a) != string(g) {
					t.Errorf("--tree cogs gives %s, auto %s", g, a)
				}
				return
			}
			if v, ok := got["compound_divergence"].(float64); !ok || v <= 0 || v > 1 {
				t.Errorf("compound_divergence = %v", got["compound_divergence"])
			}
		})
	}
	t.Run("bracketed stops at the first logical form", func(t *testing.T) {
		stdout, errs, code := runCLI(t, "stats", "--train", train, "--test", gen, "--tree", "bracketed")
		if code != 1 || stdout != "" || !strings.Contains(errs, `id "train-1"`) {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
		}
	})
}

// TestSplitMCDCOGS: the four COGS files joined into one keep unique ids
// (STEM-N of the joined file), split mcd runs on them, and stats --split
// recomputes split.json's numbers.
func TestSplitMCDCOGS(t *testing.T) {
	dir := t.TempDir()
	var all []byte
	for _, f := range []string{"train.tsv", "dev.tsv", "test.tsv", "gen.tsv"} {
		b, err := os.ReadFile(filepath.Join(cogsExcerpt, f))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	pool := filepath.Join(dir, "all.tsv")
	if err := os.WriteFile(pool, all, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "mcd")
	if _, errs, code := runCLI(t, "split", "mcd", "--in", pool, "--out", out, "--seed", "1", "--candidates", "20"); code != 0 {
		t.Fatalf("split mcd: exit %d: %s", code, errs)
	}
	var sj struct {
		Train, Dev, Test []string
		Stats            map[string]any
	}
	raw, err := os.ReadFile(filepath.Join(out, "split.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sj); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, id := range slices.Concat(sj.Train, sj.Dev, sj.Test) {
		if seen[id] || !strings.HasPrefix(id, "all-") {
			t.Errorf("id %q repeated or not all-N", id)
		}
		seen[id] = true
	}
	if len(seen) == 0 || sj.Stats["compound_divergence"] == nil {
		t.Fatalf("split.json: %d ids, stats %v", len(seen), sj.Stats)
	}
	if _, errs, code := runCLI(t, "stats", "--split", out); code != 0 || strings.Contains(errs, "warning") {
		t.Errorf("stats --split: exit %d: %s", code, errs)
	}
}
