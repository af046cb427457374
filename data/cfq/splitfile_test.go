package cfq_test

import (
	"io"
	"math"
	"os"
	"slices"
	"testing"

	"compbench/data"
	"compbench/data/cfq"
	"compbench/data/split"
	"compbench/data/structure"
)

// TestPublishedSplitDivergence reads a hand-built split in the published
// format (testdata/mcd_split.json: indexes out of order, one example
// unused, as in CFQ's MCD files) over a six-example dataset.json, routes
// the examples the way `cfq import --split` does, and checks the atom
// divergence `stats` reports against a value worked by hand. This is the
// check docs/splits.md describes for a real published split.
//
// Rule trees (atoms are the rule ids, counted per node):
//
//	0 S(sister, director)   train
//	1 S(sister, editor)     test
//	2 S(director, director) train
//	3 S(editor)             dev
//	4 S(sister)             unused
//	5 S(director, editor)   test
//
// Train atoms S 2, sister 1, director 3 (of 6); test S 2, sister 1,
// director 1, editor 2 (of 6). D_A = 1 - sum sqrt(p q) = 1 - (2/6 + 1/6 +
// sqrt(3/36)) = 1/2 - sqrt(3)/6 = 0.21132.
func TestPublishedSplitDivergence(t *testing.T) {
	s, err := cfq.ReadSplit("testdata/mcd_split.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr, dv, te := s.Sizes(); tr != 2 || dv != 1 || te != 2 {
		t.Fatalf("sizes %d/%d/%d, want 2/1/2", tr, dv, te)
	}
	f, err := os.Open("testdata/mcd_dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := cfq.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var examples []*cfq.Example
	for {
		ex, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, ex)
	}
	parts, err := s.Parts(len(examples))
	if err != nil {
		t.Fatal(err)
	}
	byPart := map[int8][]data.Record{}
	for i, ex := range examples {
		rec, err := ex.Record(cfq.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		byPart[parts[i]] = append(byPart[parts[i]], rec)
	}
	ids := func(recs []data.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		part int8
		want []string
	}{
		{"train in dataset order", cfq.Train, []string{"cfq-0", "cfq-2"}},
		{"dev", cfq.Dev, []string{"cfq-3"}},
		{"test in dataset order", cfq.Test, []string{"cfq-1", "cfq-5"}},
		{"unused", cfq.None, []string{"cfq-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(byPart[tc.part]); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", cfq.PartNames[tc.part], got, tc.want)
			}
		})
	}
	t.Run("atom divergence", func(t *testing.T) {
		opts := split.DefaultStatsOptions()
		opts.Tree = structure.TreeCFQ
		opts.Compounds.Atoms = structure.AtomsPerOccurrence // the hand-worked value counts every rule application
		st, err := split.ComputeStats(byPart[cfq.Train], byPart[cfq.Test], opts)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.5 - math.Sqrt(3)/6
		if st.AtomDivergence == nil || math.Abs(*st.AtomDivergence-want) > 1e-9 {
			t.Errorf("atom divergence %v, want %.5f", st.AtomDivergence, want)
		}
		if !slices.Equal(st.MissingAtoms, []string{"KNOWLEDGE:editor"}) {
			t.Errorf("test atoms missing from train %v, want [KNOWLEDGE:editor]", st.MissingAtoms)
		}
		if st.CompoundDivergence == nil || *st.CompoundDivergence <= 0 || *st.CompoundDivergence > 1 {
			t.Errorf("compound divergence %v, want a value in (0, 1]", st.CompoundDivergence)
		}
	})
}
