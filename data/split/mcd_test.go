package split

import (
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
	a1, err := MCD(ix, one, DefaultMCDSizes(), data.NewRand(4), nil)
	if err != nil {
		t.Fatal(err)
	}
	a20, err := MCD(ix, cfg, DefaultMCDSizes(), data.NewRand(4), nil)
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
