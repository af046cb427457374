package split

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

func TestSizesCounts(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n                int
		sizes            Sizes
		train, dev, test int
		wantErr          bool
	}{
		// Counts round to nearest: 2.5 -> 3 (half away from zero), 7.5 -> 8.
		{"test rounds up", 10, Sizes{Test: 0.25}, 7, 0, 3, false},
		{"all parts round", 7, Sizes{Train: 0.5, Dev: 0.2, Test: 0.3}, 4, 1, 2, false},
		{"rest goes to train", 20, Sizes{Dev: 0.1, Test: 0.15}, 15, 2, 3, false},
		// Train 0.4 of 10 examples rounds to 0: no training data.
		{"train rounds to 0", 10, Sizes{Train: 0.04, Test: 0.5}, 0, 0, 0, true},
		{"test rounds to 0", 10, Sizes{Test: 0.04}, 0, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, dv, te, err := tc.sizes.counts(tc.n)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && (tr != tc.train || dv != tc.dev || te != tc.test) {
				t.Errorf("counts %d/%d/%d, want %d/%d/%d", tr, dv, te, tc.train, tc.dev, tc.test)
			}
		})
	}
}

// lengthPool makes records whose outputs have the given token counts.
func lengthPool(lens ...int) []data.Record {
	pool := make([]data.Record, len(lens))
	for i, l := range lens {
		pool[i] = data.Record{ID: fmt.Sprint(i), Input: "x", Output: strings.TrimSpace(strings.Repeat("y ", l))}
	}
	return pool
}

func TestLengthCounts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lens      []int
		cfg       LengthConfig
		sizes     Sizes
		dev, test int
	}{
		// Threshold 3 sends only examples longer than 3 to evaluation.
		{"explicit threshold is exclusive", []int{1, 2, 3, 3, 4}, LengthConfig{Threshold: 3}, Sizes{Test: 0.2}, 0, 1},
		// Target 4 of 6: lengths above 2 give 3, above 1 give 5; both are
		// 1 off, and the tie goes to the larger threshold.
		{"tie keeps the larger threshold", []int{1, 2, 2, 3, 3, 3}, LengthConfig{}, Sizes{Test: 4.0 / 6}, 0, 3},
		// 5 evaluation examples divided dev:test = 0.1:0.4 -> 1.25 + 0.5 -> 1 dev.
		{"dev and test keep their ratio", []int{1, 1, 1, 1, 1, 2, 2, 2, 2, 2}, LengthConfig{}, Sizes{Dev: 0.1, Test: 0.4}, 1, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := lengthPool(tc.lens...)
			a, err := Length(pool, tc.cfg, tc.sizes, data.NewRand(1))
			if err != nil {
				t.Fatal(err)
			}
			checkPartition(t, a, len(pool), true)
			if len(a.Dev) != tc.dev || len(a.Test) != tc.test {
				t.Errorf("dev %d test %d, want %d and %d", len(a.Dev), len(a.Test), tc.dev, tc.test)
			}
		})
	}
}

func TestLikelihoodParts(t *testing.T) {
	// Ten records, score = index, unless flat.
	pool := make([]data.Record, 10)
	for i := range pool {
		// Records 0-4 have 1 input token, 5-9 have 2.
		pool[i] = data.Record{ID: fmt.Sprint(i), Input: strings.Repeat("w ", 1+i/5), Output: "y"}
	}
	byIndex, flat := map[string]float64{}, map[string]float64{}
	for i := range pool {
		byIndex[pool[i].ID] = float64(i)
		flat[pool[i].ID] = 1
	}
	evalOf := func(a Assignment) []int {
		e := append(append([]int(nil), a.Dev...), a.Test...)
		sort.Ints(e)
		return e
	}
	t.Run("train takes the most likely of the rest", func(t *testing.T) {
		// Eval 0, 1 (least likely); train the 5 most likely: 5..9.
		a, err := Likelihood(context.Background(), pool, byIndex, nil, LikelihoodConfig{}, Sizes{Train: 0.5, Test: 0.2}, data.NewRand(1))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a.Train) != "[5 6 7 8 9]" || fmt.Sprint(evalOf(a)) != "[0 1]" {
			t.Errorf("train %v eval %v, want [5 6 7 8 9] and [0 1]", a.Train, evalOf(a))
		}
	})
	t.Run("length buckets each send their share", func(t *testing.T) {
		// Unbucketed, eval would be 0..3 (all short). Two buckets of 5 by
		// length send 4*5/10 = 2 each: the least likely of each, 0, 1, 5, 6.
		a, err := Likelihood(context.Background(), pool, byIndex, nil, LikelihoodConfig{LenBuckets: 2, By: "input"}, Sizes{Test: 0.4}, data.NewRand(1))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(evalOf(a)); got != "[0 1 5 6]" {
			t.Errorf("eval %v, want [0 1 5 6]", got)
		}
	})
	t.Run("ties are broken by the seed", func(t *testing.T) {
		// With every score equal the evaluation side is a random draw: 8
		// seeds giving one and the same set would mean ties follow pool order.
		sets := map[string]bool{}
		for seed := uint64(1); seed <= 8; seed++ {
			a, err := Likelihood(context.Background(), pool, flat, nil, LikelihoodConfig{}, Sizes{Test: 0.3}, data.NewRand(seed))
			if err != nil {
				t.Fatal(err)
			}
			sets[fmt.Sprint(evalOf(a))] = true
		}
		if len(sets) < 2 {
			t.Errorf("8 seeds gave the evaluation sets %v", sets)
		}
	})
}

func TestMCDScore(t *testing.T) {
	maxC := MCDConfig{MaxAtomDiv: 0.02}
	target := MCDConfig{MaxAtomDiv: 0.02, TargetDiv: 0.5}
	for _, tc := range []struct {
		name   string
		cfg    MCDConfig
		a, b   [2]float64 // (D_C, D_A)
		better bool       // a better than b
	}{
		{"higher D_C wins", maxC, [2]float64{0.6, 0.01}, [2]float64{0.5, 0.01}, true},
		{"within the bound beats outside", maxC, [2]float64{0.1, 0.02}, [2]float64{0.9, 0.03}, true},
		{"outside: lower D_A wins", maxC, [2]float64{0.1, 0.03}, [2]float64{0.9, 0.04}, true},
		{"target: closer wins", target, [2]float64{0.45, 0.01}, [2]float64{0.7, 0.01}, true},
		{"target: higher but farther loses", target, [2]float64{0.9, 0.01}, [2]float64{0.55, 0.01}, false},
		{"equal scores: neither better", maxC, [2]float64{0.5, 0.01}, [2]float64{0.5, 0.01}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sa, sb := tc.cfg.score(tc.a[0], tc.a[1]), tc.cfg.score(tc.b[0], tc.b[1])
			if got := sa.better(sb); got != tc.better {
				t.Errorf("%+v better than %+v = %v, want %v", sa, sb, got, tc.better)
			}
		})
	}
}

// atomIndex indexes small trees for the atom-balancing tests.
func atomIndex(t *testing.T, trees ...string) *structure.Index {
	t.Helper()
	var ts []*data.Tree
	for _, s := range trees {
		tr, err := structure.ParseBracketed(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	ix, err := structure.Build(ts, structure.CompoundConfig{MaxSize: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestKeepsAtoms(t *testing.T) {
	// Train atom counts: atom 0 twice, atom 1 once.
	ta := []float64{2, 1}
	for _, tc := range []struct {
		name    string
		out, in []structure.Entry
		want    bool
	}{
		{"last copy leaves", []structure.Entry{{ID: 1, W: 1}}, nil, false},
		{"one of two copies leaves", []structure.Entry{{ID: 0, W: 1}}, nil, true},
		{"both copies leave", []structure.Entry{{ID: 0, W: 2}}, nil, false},
		{"last copy replaced", []structure.Entry{{ID: 1, W: 1}}, []structure.Entry{{ID: 1, W: 1}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keepsAtoms(tc.out, tc.in, ta); got != tc.want {
				t.Errorf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestBalanceAtoms(t *testing.T) {
	// Pool: 0 a(b), 1 a(c), 2 a(b), 3 a(d). Evaluation example 3 holds d,
	// which train lacks. Trading 1 would lose c (its only copy) and is
	// skipped; 0 can go, since 2 still holds b.
	ix := atomIndex(t, "a(b)", "a(c)", "a(b)", "a(d)")
	train, eval := []int{1, 0, 2}, []int{3}
	if err := balanceAtoms(ix, train, eval, nil); err != nil {
		t.Fatal(err)
	}
	a := Assignment{Train: train, Test: eval}
	if m := atomsMissing(ix, a); m != 0 || fmt.Sprint(train, eval) != "[1 3 2] [0]" {
		t.Errorf("train %v eval %v (%d atoms missing), want [1 3 2] [0]", train, eval, m)
	}
}
