package split

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

func TestMCDConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*MCDConfig)
		ok   bool
	}{
		{"default", func(*MCDConfig) {}, true},
		{"no removals", func(c *MCDConfig) { c.RemoveEvery = 0 }, true},
		{"removal after every addition", func(c *MCDConfig) { c.RemoveEvery = 1 }, false},
		{"atom bound 0", func(c *MCDConfig) { c.MaxAtomDiv = 0 }, false},
		{"target above 1", func(c *MCDConfig) { c.TargetDiv = 1.5 }, false},
		{"negative candidates", func(c *MCDConfig) { c.EvalCandidates = -1 }, false},
		{"negative divisions", func(c *MCDConfig) { c.Divisions = -1 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultMCDConfig()
			tc.edit(&c)
			if err := c.Validate(); (err == nil) != tc.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// TestMCDDivision checks that keeping the best of several dev/test divisions
// never scores worse on train against test than the first division alone
// (the same seed draws the same first division), and that the parts keep
// their sizes.
func TestMCDDivision(t *testing.T) {
	pool := scanSample(1500, 3)
	ix := index(t, pool)
	cfg := DefaultMCDConfig()
	cfg.Candidates, cfg.RemoveEvery = 40, 5
	score := func(a Assignment) score {
		dc := structure.Divergence(ix.CompoundDist(a.Train, true), ix.CompoundDist(a.Test, true), structure.CompoundAlpha)
		da := structure.Divergence(ix.AtomDist(a.Train), ix.AtomDist(a.Test), structure.AtomAlpha)
		return cfg.score(dc, da)
	}
	one := cfg
	one.Divisions = 1
	a1, err := MCD(context.Background(), ix, OutputLengths(pool), one, DefaultMCDSizes(), data.NewRand(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	a20, err := MCD(context.Background(), ix, OutputLengths(pool), cfg, DefaultMCDSizes(), data.NewRand(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a20.Train) != 600 || len(a20.Dev) != 75 || len(a20.Test) != 75 {
		t.Fatalf("sizes %d/%d/%d, want 600/75/75", len(a20.Train), len(a20.Dev), len(a20.Test))
	}
	if s1, s20 := score(a1), score(a20); s1.better(s20) {
		t.Errorf("best of 20 divisions %+v scores below the first %+v", s20, s1)
	}
}

// TestFastPow: the candidate scores' power agrees with math.Pow to 1e-10
// relative over the range of weight sums, and is 0 at or below eps.
func TestFastPow(t *testing.T) {
	for _, y := range []float64{structure.CompoundAlpha, 1 - structure.CompoundAlpha, structure.AtomAlpha} {
		for x := 2e-9; x < 1e7; x *= 1.0137 {
			got, want := fastPow(x, y), math.Pow(x, y)
			if math.Abs(got-want) > 1e-10*want {
				t.Fatalf("fastPow(%g, %g) = %.17g, math.Pow %.17g", x, y, got, want)
			}
		}
		if fastPow(eps, y) != 0 || fastPow(0, y) != 0 {
			t.Errorf("fastPow at eps or 0 is not 0")
		}
	}
}

// TestLengthStrata: strata by hand, a length never in two strata, and one
// stratum when off.
func TestLengthStrata(t *testing.T) {
	// 10 examples, 3 strata: lengths 1 (x4) have midpoint rank 0.2 -> 0;
	// 2 (x1) 0.45 -> 1; 3 (x2) 0.6 -> 1; 9 (x3) 0.85 -> 2.
	lens := []int{9, 1, 1, 3, 2, 1, 9, 3, 1, 9}
	got, n := lengthStrata(lens, 3)
	want := []int{2, 0, 0, 1, 1, 0, 2, 1, 0, 2}
	if n != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("strata %v (%d), want %v (3)", got, n, want)
	}
	// One length everywhere: duplicate edges collapse to one stratum.
	if _, n := lengthStrata([]int{4, 4, 4, 4}, 10); n != 1 {
		t.Errorf("one length gives %d strata, want 1", n)
	}
	if st, n := lengthStrata(lens, 0); n != 1 || st[0] != 0 {
		t.Errorf("off: %v (%d), want one stratum", st, n)
	}
}

// TestMCDLengthStrata: with strata on, each side holds every stratum in
// its pool share (within one example per stratum, plus the removals still
// to be made up), and the same seed gives the same split with any number
// of scoring workers.
func TestMCDLengthStrata(t *testing.T) {
	pool := scanSample(1200, 9)
	ix := index(t, pool)
	lens := OutputLengths(pool)
	cfg := DefaultMCDConfig()
	cfg.Candidates, cfg.RemoveEvery, cfg.MaxAtomDiv, cfg.LengthBuckets = 100, 4, 0.05, 10
	old := scorerWorkers
	defer func() { scorerWorkers = old }()
	scorerWorkers = func() int { return 3 }
	a, err := MCD(context.Background(), ix, lens, cfg, DefaultMCDSizes(), data.NewRand(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, k := lengthStrata(lens, cfg.LengthBuckets)
	share := make([]float64, k)
	for _, s := range st {
		share[s] += 1 / float64(len(pool))
	}
	for name, side := range map[string][]int{"train": a.Train, "eval": append(append([]int(nil), a.Dev...), a.Test...)} {
		held := make([]float64, k)
		for _, i := range side {
			held[st[i]]++
		}
		for s := range held {
			if want := share[s] * float64(len(side)); math.Abs(held[s]-want) > 2+0.02*want {
				t.Errorf("%s holds %v of stratum %d, pool share %.1f", name, held[s], s, want)
			}
		}
	}
	if r := lengthRatio(pool, a, func(r *data.Record) string { return r.Output }); r < 0.8 || r > 1.25 {
		t.Errorf("output length ratio %.3f with strata on", r)
	}
	scorerWorkers = func() int { return 1 }
	b, err := MCD(context.Background(), ix, lens, cfg, DefaultMCDSizes(), data.NewRand(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("one scoring worker gives another split")
	}
}

// TestMCDLengthBand: the default band keeps the test/train output length
// ratio within [1/1.5, 1.5] where the free greedy leaves it; a band of 1.1
// holds too.
func TestMCDLengthBand(t *testing.T) {
	pool := scanSample(1200, 5)
	ix := index(t, pool)
	lens := OutputLengths(pool)
	out := func(r *data.Record) string { return r.Output }
	for _, r := range []float64{1.5, 1.1} {
		cfg := DefaultMCDConfig()
		cfg.Candidates, cfg.RemoveEvery, cfg.MaxAtomDiv, cfg.MaxLengthRatio = 100, 4, 0.05, r
		a, err := MCD(context.Background(), ix, lens, cfg, DefaultMCDSizes(), data.NewRand(3), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := lengthRatio(pool, a, out); got > r || got < 1/r {
			t.Errorf("band %v: output length ratio %.3f", r, got)
		}
	}
}

func TestMCDScoreLength(t *testing.T) {
	c := MCDConfig{MaxAtomDiv: 0.02, MaxLengthRatio: 1.5}
	in, out := c.scoreLen(0.3, 0.01, 1.4), c.scoreLen(0.9, 0.01, 1.6)
	if !in.better(out) {
		t.Errorf("in-band %+v does not beat out-of-band %+v", in, out)
	}
	if near, far := c.scoreLen(0.1, 0.01, 1.6), c.scoreLen(0.9, 0.01, 2); !near.better(far) {
		t.Errorf("out of band: nearer %+v does not beat farther %+v", near, far)
	}
	if short := c.scoreLen(0.5, 0.01, 1/1.6); short.ok {
		t.Errorf("ratio 1/1.6 is inside the band: %+v", short)
	}
}

// TestMCDSameAcrossGOMAXPROCS: the compound index (whose weighing passes
// run on GOMAXPROCS goroutines) and the MCD split (whose candidate scores
// do) come out the same for 1, 2 and 3 procs, over both supergraph sets,
// with and without dropping compounds, on a pool of several weighing
// blocks.
func TestMCDSameAcrossGOMAXPROCS(t *testing.T) {
	pool := scanSample(1300, 11)
	trees, err := Trees(pool, structure.TreeAuto)
	if err != nil {
		t.Fatal(err)
	}
	lens := OutputLengths(pool)
	run := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var b strings.Builder
		for _, sup := range []string{structure.SupersAll, structure.SupersOneNode} {
			for _, keep := range []int{0, structure.KeepAuto} {
				ix, err := structure.Build(trees, structure.CompoundConfig{MaxSize: 6, Keep: keep, Supergraphs: sup}, nil)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "%s %d: %v %v %v\n", sup, keep, ix.Keep, ix.Compounds, ix.Examples)
				if keep != 0 && sup == structure.SupersOneNode {
					cfg := DefaultMCDConfig()
					cfg.Candidates, cfg.MaxAtomDiv = 100, 0.05
					a, err := MCD(context.Background(), ix, lens, cfg, DefaultMCDSizes(), data.NewRand(5), nil)
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "split %v\n", a)
				}
			}
		}
		return b.String()
	}
	one := run(1)
	for _, procs := range []int{2, 3} {
		if got := run(procs); got != one {
			t.Errorf("GOMAXPROCS %d gives another index or split than GOMAXPROCS 1", procs)
		}
	}
}

// TestCachedPairDivSameBits: the power caches MCD's scoring keeps (weight
// 1 and each id's most common other weight) give the same bits as
// computing every power, for additions and removals on both sides, as
// examples come and go.
func TestCachedPairDivSameBits(t *testing.T) {
	rng := data.NewRand(3)
	const ids = 40
	ex := make([][]structure.Entry, 60)
	for i := range ex {
		for k := int32(0); k < ids; k++ {
			if rng.IntN(3) == 0 {
				w := 1.0
				if rng.IntN(2) == 0 {
					w = []float64{0.25, 0.5, 2, 1.0 / 3}[rng.IntN(4)]
				}
				ex[i] = append(ex[i], structure.Entry{ID: k, W: w})
			}
		}
	}
	for _, alpha := range []float64{structure.CompoundAlpha, structure.AtomAlpha} {
		plain, unit := newPairDiv(ids, alpha), newCachedPairDiv(ids, alpha, ex)
		in := map[int]bool{}
		for step := 0; step < 400; step++ {
			i := rng.IntN(len(ex))
			test := i%3 == 0
			for j := range ex {
				for _, sign := range []float64{1, -1} {
					for _, side := range []bool{false, true} {
						if a, b := plain.what(ex[j], side, sign), unit.what(ex[j], side, sign); math.Float64bits(a) != math.Float64bits(b) {
							t.Fatalf("step %d: what(%d, %v, %v) = %v with the caches, %v without", step, j, side, sign, b, a)
						}
					}
				}
			}
			sign := 1.0
			if in[i] {
				sign = -1
			}
			in[i] = !in[i]
			plain.apply(ex[i], test, sign)
			unit.apply(ex[i], test, sign)
		}
	}
}

// TestMCDRestarts: the first of several greedy runs draws what a single run
// draws, so it ends in the same state; the restarts keep the best end
// state, never a worse one; and the polish phase, which follows the same
// greedy, never lowers its score.
func TestMCDRestarts(t *testing.T) {
	pool := scanSample(600, 7)
	ix := index(t, pool)
	lens := OutputLengths(pool)
	atoms, comps := exampleVectors(ix)
	cfg := DefaultMCDConfig()
	cfg.Candidates, cfg.MaxAtomDiv = 60, 0.05
	sizes := DefaultMCDSizes()
	nTrain, nDev, nTest, err := sizes.counts(len(pool))
	if err != nil {
		t.Fatal(err)
	}
	search := func(cfg MCDConfig, rng *rand.Rand) *mcdState {
		st, err := mcdSearch(context.Background(), ix, cfg, lens, nTrain, nDev+nTest, atoms, comps, rng, nil, "mcd")
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	one := search(cfg, data.NewRand(4))
	rng := data.NewRand(4)
	var runs []*mcdState
	for range 3 {
		runs = append(runs, search(cfg, rng))
	}
	t.Run("first run is the single run", func(t *testing.T) {
		if fmt.Sprint(runs[0].train, runs[0].eval) != fmt.Sprint(one.train, one.eval) {
			t.Error("the first of three runs ends elsewhere than a single run")
		}
	})
	t.Run("runs differ", func(t *testing.T) {
		if fmt.Sprint(runs[1].eval) == fmt.Sprint(runs[0].eval) {
			t.Error("the second run repeats the first")
		}
	})
	t.Run("best kept", func(t *testing.T) {
		c := cfg
		c.Restarts = 3
		a, err := MCD(context.Background(), ix, lens, c, sizes, data.NewRand(4), nil)
		if err != nil {
			t.Fatal(err)
		}
		best := runs[0]
		for _, r := range runs[1:] {
			if r.score.better(best.score) {
				best = r
			}
		}
		for i, r := range runs {
			t.Logf("run %d score %+v", i, r.score)
		}
		got := append(append([]int(nil), a.Dev...), a.Test...)
		want := append([]int(nil), best.eval...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Error("MCD with 3 restarts does not keep the best-scoring run's evaluation side")
		}
	})
	t.Run("polish never lowers the score", func(t *testing.T) {
		c := cfg
		c.Polish = 300
		p := search(c, data.NewRand(4))
		t.Logf("greedy %+v polished %+v", one.score, p.score)
		if one.score.better(p.score) {
			t.Errorf("polished score %+v below the greedy's %+v", p.score, one.score)
		}
		if !p.score.better(one.score) {
			t.Errorf("300 polish steps found no improvement on %+v (they did when written: 0.686 -> 0.694)", one.score)
		}
		if one.score.ok && !p.score.ok {
			t.Errorf("polish left the bounds: %+v", p.score)
		}
		a, err := MCD(context.Background(), ix, lens, c, sizes, data.NewRand(4), nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, side := range [][]int{a.Train, a.Dev, a.Test} {
			for _, i := range side {
				if seen[i] {
					t.Fatalf("example %d on two sides after polishing", i)
				}
				seen[i] = true
			}
		}
		if len(a.Train) != nTrain || len(a.Dev) != nDev || len(a.Test) != nTest {
			t.Errorf("sizes %d/%d/%d after polishing, want %d/%d/%d", len(a.Train), len(a.Dev), len(a.Test), nTrain, nDev, nTest)
		}
	})
}

func TestAutoRestarts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries int
		want    int
	}{{"empty", 0, 3}, {"original SCAN size", 901_968, 3}, {"at the limit", RestartEntries, 3}, {"above", RestartEntries + 1, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AutoRestarts(tc.entries); got != tc.want {
				t.Errorf("AutoRestarts(%d entries) = %d, want %d", tc.entries, got, tc.want)
			}
		})
	}
}
