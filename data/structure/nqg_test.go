package structure

import (
	"math"
	"strings"
	"testing"

	"compbench/data"
)

// The three programs of the hand-worked example, T1 and T2 training, T3
// test. Their NQG compounds, written out by hand (count per program):
//
//	T1 answer(loc_2(m0)):                        answer(loc_2) 1, loc_2(m0) 1
//	T2 answer(intersection(city, loc_2(m0))):    answer(intersection) 1, intersection(city, _) 1,
//	                                             intersection(_, loc_2) 1, loc_2(m0) 1
//	T3 answer(intersection(state, next_to_2(     answer(intersection) 1, intersection(state, _) 2,
//	   intersection(state, next_to_2(m0))))):    intersection(_, next_to_2) 2, next_to_2(intersection) 1,
//	                                             next_to_2(m0) 1
//
// Train totals 6 (loc_2(m0) twice), test 7; they share only
// answer(intersection), 1 on each side, so
// D_C = 1 - 1^0.1 * 1^0.9 / (6^0.1 * 7^0.9) = 0.854924.
// Atoms, once per program: train answer 2, loc_2 2, m0 2, intersection 1,
// city 1 (total 8); test answer, intersection, state, next_to_2, m0, 1 each
// (total 5); shared answer (2, 1), m0 (2, 1), intersection (1, 1), so
// D_A = 1 - (2 sqrt(2) + 1) / sqrt(8 * 5) = 0.394673.
var nqgHand = []string{
	"answer ( loc_2 ( m0 ) )",
	"answer ( intersection ( city , loc_2 ( m0 ) ) )",
	"answer ( intersection ( state , next_to_2 ( intersection ( state , next_to_2 ( m0 ) ) ) ) )",
}

func nqgIndex(t *testing.T, cfg CompoundConfig, programs ...string) *Index {
	t.Helper()
	trees := make([]*data.Tree, len(programs))
	for i, p := range programs {
		trees[i] = mustTree(t, p)
	}
	cfg.Measure = MeasureNQG
	ix, err := Build(trees, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestNQGCompounds(t *testing.T) {
	ix := nqgIndex(t, CompoundConfig{}, nqgHand...)
	for _, tc := range []struct {
		name string
		ex   int
		want map[string]float64
	}{
		{"T1", 0, map[string]float64{"answer(loc_2)": 1, "loc_2(m0)": 1}},
		{"T2", 1, map[string]float64{"answer(intersection)": 1, "intersection(city, _)": 1, "intersection(_, loc_2)": 1, "loc_2(m0)": 1}},
		{"T3 counts repeats", 2, map[string]float64{"answer(intersection)": 1, "intersection(state, _)": 2,
			"intersection(_, next_to_2)": 2, "next_to_2(intersection)": 1, "next_to_2(m0)": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := weights(ix, tc.ex)
			if len(got) != len(tc.want) {
				t.Fatalf("compounds %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s: %v, want %v", k, got[k], w)
				}
			}
		})
	}
	if ix.MaxSize != NQGCompoundSize || ix.Measure != MeasureNQG || ix.AtomCount != AtomsPerExample || ix.Keep != 0 {
		t.Errorf("index says size %d, measure %q, atoms %q, keep %d", ix.MaxSize, ix.Measure, ix.AtomCount, ix.Keep)
	}
}

func TestNQGDivergence(t *testing.T) {
	train, test := []int{0, 1}, []int{2}
	for _, tc := range []struct {
		name   string
		atoms  string
		wantDC float64
		wantDA float64
	}{
		// The numbers worked out above nqgHand.
		{"atoms per example", AtomsPerExample, 0.854924, 0.394673},
		// Per node, T3 has intersection, state and next_to_2 twice:
		// train answer 2, loc_2 2, m0 2, intersection 1, city 1 (8); test
		// answer 1, intersection 2, state 2, next_to_2 2, m0 1 (8); shared
		// answer (2, 1), m0 (2, 1), intersection (1, 2):
		// 1 - 3 sqrt(2) / 8 = 0.469670.
		{"atoms per occurrence", AtomsPerOccurrence, 0.854924, 0.469670},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := nqgIndex(t, CompoundConfig{Atoms: tc.atoms}, nqgHand...)
			dc := Divergence(ix.CompoundDist(train, true), ix.CompoundDist(test, true), CompoundAlpha)
			da := Divergence(ix.AtomDist(train), ix.AtomDist(test), AtomAlpha)
			if math.Abs(dc-tc.wantDC) > 1e-6 || math.Abs(da-tc.wantDA) > 1e-6 {
				t.Errorf("D_C %.6f, D_A %.6f; want %.6f, %.6f", dc, da, tc.wantDC, tc.wantDA)
			}
		})
	}
}

// TestNQGArity: the arity is part of the compound, so f(a) under a
// one-slot and a two-slot f differ, and a leaf child names only itself.
func TestNQGArity(t *testing.T) {
	ix := nqgIndex(t, CompoundConfig{}, "f(a)", "f(a, b)", "f(a(c), b)", `g("x, y")`)
	got := strings.Join(ix.Compounds, " | ")
	const want = `f(a) | f(a, _) | f(_, b) | a(c) | g("\"x, y\"")`
	if got != want {
		t.Errorf("compounds %s, want %s", got, want)
	}
}

func TestNQGConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  CompoundConfig
		msg  string // "" when valid
	}{
		{"default size", CompoundConfig{Measure: MeasureNQG, Keep: KeepAuto}, ""},
		{"size 2", CompoundConfig{Measure: MeasureNQG, MaxSize: 2}, ""},
		{"size 3", CompoundConfig{Measure: MeasureNQG, MaxSize: 3}, "compounds are 2 nodes"},
		{"keysers by name", CompoundConfig{Measure: MeasureKeysers, MaxSize: 3}, ""},
		{"unknown", CompoundConfig{Measure: "shaw"}, "want keysers or nqg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.msg == "" && err != nil || tc.msg != "" && (err == nil || !strings.Contains(err.Error(), tc.msg)) {
				t.Errorf("Validate() = %v, want %q", err, tc.msg)
			}
		})
	}
	if _, err := Build([]*data.Tree{nil}, CompoundConfig{Measure: MeasureNQG}, nil); err == nil {
		t.Error("Build accepted a nil tree")
	}
}
