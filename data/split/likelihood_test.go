package split

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

// TestLengthBuckets pins lengthBuckets to pandas' qcut with integer labels
// and duplicates="drop" (each case was also checked against pandas 1.5.3),
// worked by hand: edges are the j/k quantiles by linear interpolation at
// position (n-1)j/k of the sorted lengths, equal edges merge, bins are
// closed on the right and the lowest edge joins the first bin.
func TestLengthBuckets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lens   []float64
		k      int
		labels []int
		nb     int
	}{
		// sorted positions 0, 2.25, 4.5, 6.75, 9 -> edges 1, 1, 2, 3.75, 6;
		// the two 1s merge: bins [1, 2], (2, 3.75], (3.75, 6] of sizes 6, 1, 3.
		{"equal edges merge", []float64{1, 1, 1, 1, 2, 2, 3, 4, 5, 6}, 4, []int{0, 0, 0, 0, 0, 0, 1, 2, 2, 2}, 3},
		// positions 0, 2, 4 -> edges 1, 3, 5: 3 falls in the first bin.
		{"closed on the right", []float64{1, 2, 3, 4, 5}, 2, []int{0, 0, 0, 1, 1}, 2},
		// sorted 1 1 2 3 3, positions 0, 4/3, 8/3, 4 -> edges 1, 4/3, 8/3, 3.
		{"interpolated edges, input order kept", []float64{3, 1, 2, 1, 3}, 3, []int{2, 0, 1, 0, 2}, 3},
		// Every edge is 4: pandas gives no bin (NaN labels), after which
		// the reference fills training with the most likely examples, as
		// one bin holding everything does.
		{"one length, one bin", []float64{4, 4, 4}, 3, []int{0, 0, 0}, 1},
		// edges 1, 4, 7, 10: the middle bin is empty.
		{"more bins than examples", []float64{1, 10}, 3, []int{0, 2}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels, nb := lengthBuckets(tc.lens, tc.k)
			if !slices.Equal(labels, tc.labels) || nb != tc.nb {
				t.Fatalf("labels %v (%d bins), want %v (%d)", labels, nb, tc.labels, tc.nb)
			}
		})
	}
}

// bucketPool is ten records whose input lengths are 1 1 1 1 2 2 3 4 5 6
// (bins of 4 quantiles: {0-5}, {6}, {7, 8, 9}) with these scores.
func bucketPool() ([]data.Record, map[string]float64) {
	lens := []int{1, 1, 1, 1, 2, 2, 3, 4, 5, 6}
	score := []float64{10, 3, 7, 1, 9, 5, 2, 8, 4, 6}
	pool := make([]data.Record, len(lens))
	scores := map[string]float64{}
	for i := range pool {
		pool[i] = data.Record{ID: fmt.Sprint(i), Input: strings.TrimSpace(strings.Repeat("w ", lens[i])), Output: "y"}
		scores[pool[i].ID] = score[i]
	}
	return pool, scores
}

func evalSet(a Assignment) []int {
	e := append(append([]int(nil), a.Dev...), a.Test...)
	sort.Ints(e)
	return e
}

// TestLikelihoodLengthBuckets works Godbole & Jia's length control by hand
// on bucketPool with 5 training examples. Training quotas are 5*6/10 = 3,
// 5*1/10 = 0.5 and 5*3/10 = 1.5. Bucket {0-5} by score: 0 4 2 | 5 1 3;
// {6}: 6; {7, 8, 9}: 7 9 8.
func TestLikelihoodLengthBuckets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		up    []bool // rounding of buckets {6} and {7, 8, 9}
		train []int
	}{
		// quotas 3 0 1: train 0 4 2 7 is one short; the most likely
		// evaluation example, 9 (score 6), moves to train.
		{"both down, boundary moves into eval", []bool{false, false}, []int{0, 2, 4, 7, 9}},
		// quotas 3 1 2: train 0 4 2 6 7 9 is one over; the least likely
		// training example, 6 (score 2), moves back to eval.
		{"both up, boundary moves into train", []bool{true, true}, []int{0, 2, 4, 7, 9}},
		// quotas 3 1 1: exactly 5, nothing moves; 6 stays in train although
		// 9 is more likely.
		{"up then down", []bool{true, false}, []int{0, 2, 4, 6, 7}},
		{"down then up", []bool{false, true}, []int{0, 2, 4, 7, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, scores := bucketPool()
			var fracs []float64
			up := func(f float64) bool {
				fracs = append(fracs, f)
				return tc.up[len(fracs)-1]
			}
			a, err := likelihood(context.Background(), pool, scores, nil, LikelihoodConfig{LenBuckets: 4, By: "input"}, Sizes{Test: 0.5}, data.NewRand(1), up)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(fracs, []float64{0.5, 0.5}) {
				t.Errorf("rounding asked for %v, want [0.5 0.5] (the full bucket needs none)", fracs)
			}
			if !slices.Equal(a.Train, tc.train) {
				t.Errorf("train %v, want %v", a.Train, tc.train)
			}
			if len(evalSet(a)) != 5 {
				t.Errorf("eval %v, want 5 examples", evalSet(a))
			}
		})
	}
	t.Run("seeded rounding gives one of the hand-worked splits", func(t *testing.T) {
		pool, scores := bucketPool()
		seen := map[string]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			a, err := Likelihood(context.Background(), pool, scores, nil, LikelihoodConfig{LenBuckets: 4, By: "input"}, Sizes{Test: 0.5}, data.NewRand(seed))
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(a.Train)
			if got != "[0 2 4 7 9]" && got != "[0 2 4 6 7]" {
				t.Fatalf("seed %d: train %s", seed, got)
			}
			seen[got] = true
		}
		if len(seen) != 2 {
			t.Errorf("20 seeds gave only %v", seen)
		}
	})
}

// TestLikelihoodAtomConstraint works the NQG atom balancing by hand. Eight
// examples scored by index, 4 to train: train listed least likely first
// [4 5 6 7], eval most likely first [3 2 1 0]. Atoms: every example has a;
// 1 and 3 have y (missing from train), 4 has w and 7 has v (each in one
// training example only).
func TestLikelihoodAtomConstraint(t *testing.T) {
	const a, v, w, y = 0, 1, 2, 3
	for _, tc := range []struct {
		name  string
		atoms [][]int32
		train []int
		err   string
	}{
		// The first training example without a single atom (5) trades with
		// the first, most likely, evaluation example with y (3); then y is
		// in train and 1 stays in eval.
		{"most likely evaluation example goes first",
			[][]int32{{a}, {a, y}, {a}, {a, y}, {a, w}, {a}, {a}, {a, v}}, []int{3, 4, 6, 7}, ""},
		// 6 and 7 also hold atoms of their own: only 5 can go.
		{"training examples with a single atom stay",
			[][]int32{{a}, {a, y}, {a}, {a, y}, {a, w}, {a}, {a, 2 + 4}, {a, v}}, []int{3, 4, 6, 7}, ""},
		{"nothing missing, nothing moves",
			[][]int32{{a}, {a}, {a}, {a}, {a, w}, {a}, {a}, {a, v}}, []int{4, 5, 6, 7}, ""},
		{"no training example can go",
			[][]int32{{a}, {a, y}, {a}, {a}, {w}, {v}, {a, 4}, {5}}, nil, "cannot balance atoms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := make([]data.Record, 8)
			scores := map[string]float64{}
			ix := &structure.Index{Atoms: []string{"a", "v", "w", "y", "p", "q", "r"}}
			for i := range pool {
				pool[i] = data.Record{ID: fmt.Sprint(i), Input: "x", Output: "y"}
				scores[pool[i].ID] = float64(i)
				var ex structure.Example
				for _, id := range tc.atoms[i] {
					ex.Atoms = append(ex.Atoms, structure.Entry{ID: id, W: 1})
				}
				ix.Examples = append(ix.Examples, ex)
			}
			got, err := Likelihood(context.Background(), pool, scores, ix, LikelihoodConfig{AtomConstraint: true}, Sizes{Test: 0.5}, data.NewRand(1))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Train, tc.train) {
				t.Errorf("train %v, want %v", got.Train, tc.train)
			}
		})
	}
}

// TestLikelihoodDevTest checks the division of the evaluation side: a
// random draw by the seed of nDev examples; with equal dev and test
// fractions, the reference's halving. (The division was already so before
// the length buckets followed the reference; this pins it.)
func TestLikelihoodDevTest(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sizes     Sizes
		dev, test int
	}{
		{"equal fractions halve", Sizes{Dev: 0.2, Test: 0.2}, 2, 2},
		{"unequal fractions", Sizes{Dev: 0.1, Test: 0.3}, 1, 3},
		{"no dev", Sizes{Test: 0.4}, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, scores := bucketPool()
			a, err := Likelihood(context.Background(), pool, scores, nil, LikelihoodConfig{}, tc.sizes, data.NewRand(1))
			if err != nil {
				t.Fatal(err)
			}
			// Scores 10 9 8 7 6 5 | 4 3 2 1: eval is 1, 3, 6, 8 (scores 3 1 2 4).
			if got := fmt.Sprint(evalSet(a)); got != "[1 3 6 8]" || len(a.Dev) != tc.dev || len(a.Test) != tc.test {
				t.Errorf("dev %v test %v, want %d and %d of [1 3 6 8]", a.Dev, a.Test, tc.dev, tc.test)
			}
		})
	}
}
