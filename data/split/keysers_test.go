package split

import (
	"math"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/scan"
	"compbench/data/structure"
)

// TestSCANPatterns checks Keysers et al.'s SCAN patterns (§4) on
// hand-worked strings.
func TestSCANPatterns(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"jump opposite left twice and walk", "ACTION MOD DIR TIMES and ACTION"},
		{"turn around right thrice after look", "turn MOD DIR TIMES after ACTION"},
		{"I_TURN_LEFT I_JUMP I_TURN_RIGHT I_WALK", "DIR ACTION DIR ACTION"},
		{"LTURN RUN LOOK", "DIR ACTION ACTION"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := AnonSCAN.Apply(tc.in); got != tc.want {
				t.Errorf("%q -> %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAnonymizerResolve(t *testing.T) {
	scanPool := []data.Record{{Input: "jump twice"}, {Input: "turn left after walk"}}
	other := append(scanPool, data.Record{Input: "what is the capital of m0"})
	for _, tc := range []struct {
		name string
		a    Anonymizer
		pool []data.Record
		want Anonymizer
	}{
		{"auto on SCAN", AnonAuto, scanPool, AnonSCAN},
		{"auto on other", AnonAuto, other, AnonGeneric},
		{"auto on nothing", AnonAuto, nil, AnonGeneric},
		{"explicit stays", AnonNone, scanPool, AnonNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Resolve(tc.pool); got != tc.want {
				t.Errorf("%s.Resolve = %s, want %s", tc.a, got, tc.want)
			}
		})
	}
}

// scanPool returns the records of the given original SCAN commands, with
// Keysers et al.'s rule trees.
func scanRecords(t *testing.T, cmds ...string) []data.Record {
	t.Helper()
	out := make([]data.Record, len(cmds))
	for i, s := range cmds {
		c, err := scan.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = c.TextRecord()
		out[i].ID = s
	}
	return out
}

// TestComputeStatsOver checks that a pair measured over its pool takes the
// pool's compound weights (equal to a split's own statistics on the same
// assignment), matches records by content, not id, and names a record the
// pool lacks.
func TestComputeStatsOver(t *testing.T) {
	pool := scanRecords(t, "jump", "walk twice", "jump twice", "look left", "look left twice", "walk and jump", "turn left after run")
	train := []data.Record{pool[0], pool[1], pool[3]}
	test := []data.Record{pool[2], pool[4]}
	for i := range train {
		train[i].ID = "other-" + train[i].ID // ids need not agree
	}
	opts := DefaultStatsOptions()
	opts.Compounds = structure.CompoundConfig{MaxSize: 4}
	got, err := ComputeStatsOver(train, test, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := structure.Build(mustTrees(t, pool), opts.Compounds, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := statsOf(pool, ix, Assignment{Train: []int{0, 1, 3}, Test: []int{2, 4}}, AnonAuto)
	if *got.CompoundDivergence != *want.CompoundDivergence || *got.AtomDivergence != *want.AtomDivergence {
		t.Errorf("over the pool: D_C %v D_A %v, want %v %v", *got.CompoundDivergence, *got.AtomDivergence, *want.CompoundDivergence, *want.AtomDivergence)
	}
	if got.WeightsOver != "pool" || got.AtomCount != structure.AtomsPerExample || got.Anonymizer != AnonSCAN {
		t.Errorf("labels: weights over %q, atoms %q, anonymizer %q", got.WeightsOver, got.AtomCount, got.Anonymizer)
	}
	pair, err := ComputeStats(train, test, opts)
	if err != nil {
		t.Fatal(err)
	}
	if pair.WeightsOver != "train+test" || math.Abs(*pair.CompoundDivergence-*got.CompoundDivergence) < 1e-12 {
		t.Errorf("the pair alone should weigh over train+test and differ here: %q %v", pair.WeightsOver, *pair.CompoundDivergence)
	}
	stray := scanRecords(t, "run thrice")
	if _, err := ComputeStatsOver(train, stray, pool, opts); err == nil || !strings.Contains(err.Error(), `test record 1 (id "run thrice") is not in the pool`) {
		t.Errorf("stray record: err = %v", err)
	}
}

func mustTrees(t *testing.T, pool []data.Record) []*data.Tree {
	t.Helper()
	trees, err := Trees(pool, structure.TreeAuto)
	if err != nil {
		t.Fatal(err)
	}
	return trees
}

// TestKeysersSizes checks that length and pattern splits with a training
// fraction draw both sides down to their sizes (Keysers et al. §4: 40% and
// 10%) while keeping each side's rule: only long outputs, or only held-out
// templates, in evaluation.
func TestKeysersSizes(t *testing.T) {
	var pool []data.Record
	for _, c := range scan.OriginalCommands() {
		pool = append(pool, c.TextRecord())
	}
	sizes := Sizes{Train: 0.4, Dev: 0.05, Test: 0.05}
	rng := data.SubRand(1, "test")
	t.Run("length", func(t *testing.T) {
		a, err := Length(pool, LengthConfig{By: "output", Threshold: 22}, sizes, rng)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Train) != 8364 || len(a.Dev) != 1046 || len(a.Test) != 1046 {
			t.Errorf("sizes %d / %d / %d, want 8364 / 1046 / 1046", len(a.Train), len(a.Dev), len(a.Test))
		}
		for _, i := range a.Train {
			if n := len(strings.Fields(pool[i].Output)); n > 22 {
				t.Fatalf("train output of %d actions", n)
			}
		}
		for _, i := range append(a.Dev, a.Test...) {
			if n := len(strings.Fields(pool[i].Output)); n <= 22 {
				t.Fatalf("evaluation output of %d actions", n)
			}
		}
	})
	t.Run("output pattern", func(t *testing.T) {
		cfg := TemplateConfig{By: "output", Anonymizer: AnonSCAN, MaxTries: 10}
		a, err := Template(pool, cfg, sizes, rng)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Train) != 8364 || len(a.Dev) != 1046 || len(a.Test) != 1046 {
			t.Errorf("sizes %d / %d / %d, want 8364 / 1046 / 1046", len(a.Train), len(a.Dev), len(a.Test))
		}
		s := statsOf(pool, nil, a, AnonSCAN)
		if s.OutputPatternCoverage != 0 {
			t.Errorf("output pattern coverage %v, want 0", s.OutputPatternCoverage)
		}
	})
}

// TestMCDMinLengthRatio checks the one-sided band --min-length-ratio makes:
// a state is within bounds only when the evaluation side's mean output
// length is 1.32-1.59 times train's, and outside it scores by its log
// distance to the band.
func TestMCDMinLengthRatio(t *testing.T) {
	cfg := DefaultMCDConfig()
	cfg.MinLengthRatio, cfg.MaxLengthRatio = 1.32, 1.59
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		ratio float64
		ok    bool
		val   float64
	}{
		{"inside", 1.4, true, 0.7},
		{"test as long as train", 1, false, -math.Log(1.32)},
		{"test too long", 1.7, false, -(math.Log(1.7) - math.Log(1.59))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cfg.scoreLen(0.7, 0.01, tc.ratio)
			if s.ok != tc.ok || math.Abs(s.val-tc.val) > 1e-12 {
				t.Errorf("score %+v, want ok %v val %v", s, tc.ok, tc.val)
			}
		})
	}
	for _, bad := range []MCDConfig{
		{MaxAtomDiv: 0.02, MaxLengthRatio: 1.5, MinLengthRatio: 1.6},
		{MaxAtomDiv: 0.02, MaxLengthRatio: 1.5, MinLengthRatio: -1},
		{MaxAtomDiv: 0.02, MaxLengthRatio: 1.5, MinLengthRatio: math.NaN()},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
