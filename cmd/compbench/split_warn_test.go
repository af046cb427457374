package main

import (
	"path/filepath"
	"strings"
	"testing"

	"compbench/data/split"
)

// TestSplitDiscardWarning runs the template split on all of SCAN, where
// Bogin et al.'s per-template caps keep 32 train and 2,874 test records of
// 20,910: that must say so on stderr, and a sensible split must not.
func TestSplitDiscardWarning(t *testing.T) {
	if testing.Short() {
		t.Skip("generates all of SCAN")
	}
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool.jsonl")
	if _, errs, code := runCLI(t, "gen", "scan-original", "--out", pool); code != 0 {
		t.Fatalf("gen scan-original: exit %d: %s", code, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // substrings of the warning; nil: no warning
	}{
		{"template scan capped", []string{"template", "--anonymize", "scan"},
			[]string{"split: warning: template kept 2906 of 20910 records (train 32, dev 0, test 2874)", "dropped 18004", "train is smaller than test", "--k-test 0"}},
		{"template scan uncapped test", []string{"template", "--anonymize", "scan", "--k-test", "0"}, nil},
		{"random", []string{"random", "--test-frac", "0.2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"split"}, tc.args...)
			args = append(args, "--in", pool, "--tree", "none", "--out", filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")))
			_, errs, code := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var warn []string
			for _, l := range strings.Split(errs, "\n") {
				if strings.Contains(l, "warning") {
					warn = append(warn, l)
				}
			}
			if tc.want == nil {
				if len(warn) > 0 {
					t.Errorf("unexpected warning %q", warn)
				}
				return
			}
			if len(warn) != 1 {
				t.Fatalf("want one warning line, got %q", warn)
			}
			for _, w := range tc.want {
				if !strings.Contains(warn[0], w) {
					t.Errorf("warning %q lacks %q", warn[0], w)
				}
			}
		})
	}
}

// TestDiscardWarningFractions checks that what the fractions ask for is not
// warned about: MCD's default keeps half the pool, and a test fraction
// above train's asks for train smaller than test.
func TestDiscardWarningFractions(t *testing.T) {
	n := func(k int) []int { return make([]int, k) }
	for _, tc := range []struct {
		name  string
		sizes split.Sizes
		a     split.Assignment
		warn  bool
	}{
		{"mcd default keeps half", split.DefaultMCDSizes(), split.Assignment{Train: n(400), Dev: n(50), Test: n(50)}, false},
		{"mcd keeps a fifth", split.DefaultMCDSizes(), split.Assignment{Train: n(160), Dev: n(20), Test: n(20)}, true},
		{"test fraction above train's", split.Sizes{Test: 0.6}, split.Assignment{Train: n(400), Test: n(600)}, false},
		{"train smaller than test", split.Sizes{Test: 0.2}, split.Assignment{Train: n(300), Test: n(400)}, true},
		{"all kept", split.Sizes{Test: 0.2}, split.Assignment{Train: n(800), Test: n(200)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := split.DiscardWarning("m", 1000, tc.sizes, tc.a)
			if (got != "") != tc.warn {
				t.Errorf("warning %q, want one: %v", got, tc.warn)
			}
		})
	}
}
