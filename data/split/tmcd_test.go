package split

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

// tmcdRef is TMCD with its train atom counts recomputed from scratch for
// every candidate swap instead of kept up to date: the same random draws,
// so it must make the same split. It pins TMCD's bookkeeping, whose slips
// (a count not moved with a swap) only make the search reject swaps it may
// make, which no invariant of the split shows.
func tmcdRef(ix *structure.Index, steps int, sizes Sizes, rng *rand.Rand) (Assignment, error) {
	n := len(ix.Examples)
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	perm := rng.Perm(n)
	eval := append([]int(nil), perm[:nDev+nTest]...)
	train := append([]int(nil), perm[nDev+nTest:nDev+nTest+nTrain]...)
	if err := balanceAtoms(ix, train, eval, nil); err != nil {
		return Assignment{}, err
	}
	atoms, comps := exampleVectors(ix)
	cd := newPairDiv(len(ix.Compounds), structure.CompoundAlpha)
	for _, i := range train {
		cd.apply(comps[i], false, 1)
	}
	for _, i := range eval {
		cd.apply(comps[i], true, 1)
	}
	cur := cd.current()
	for s := 0; s < steps; s++ {
		if s%1000 == 999 {
			cd.resum()
			cur = cd.current()
		}
		ti, ei := rng.IntN(len(train)), rng.IntN(len(eval))
		i, j := train[ti], eval[ei]
		after := append(append([]int(nil), train[:ti]...), train[ti+1:]...)
		ta := ix.AtomDist(append(after, j))
		kept := true
		for _, a := range atoms[i] {
			kept = kept && ta[a.ID] > 0
		}
		if !kept {
			continue
		}
		cd.apply(comps[i], false, -1)
		cd.apply(comps[j], true, -1)
		cd.apply(comps[i], true, 1)
		cd.apply(comps[j], false, 1)
		if d := cd.current(); d > cur+1e-12 {
			cur = d
			train[ti], eval[ei] = j, i
			continue
		}
		cd.apply(comps[i], true, -1)
		cd.apply(comps[j], false, -1)
		cd.apply(comps[i], false, 1)
		cd.apply(comps[j], true, 1)
	}
	return finish(train, eval, nDev, rng), nil
}

// rareAtomIndex is a synthetic index of n examples whose atoms are rare
// (each of 3n/4 atoms occurs about twice) and whose compounds are shared
// (each example holds 2 of 12), so TMCD accepts many swaps and often meets
// the atom constraint. SCAN pools do not: their few atoms are everywhere.
func rareAtomIndex(n int, seed uint64) *structure.Index {
	rng := data.NewRand(seed)
	nAtoms, nComps := 3*n/4, 12
	ix := &structure.Index{MaxSize: 2, Atoms: make([]string, nAtoms), Compounds: make([]string, nComps)}
	for i := range ix.Atoms {
		ix.Atoms[i] = fmt.Sprint("a", i)
	}
	for i := range ix.Compounds {
		ix.Compounds[i] = fmt.Sprint("c", i)
	}
	for range n {
		a, b := rng.IntN(nAtoms), rng.IntN(nAtoms)
		c, d := rng.IntN(nComps), rng.IntN(nComps)
		ex := structure.Example{Atoms: []structure.Entry{{ID: int32(min(a, b)), W: 1}}, Compounds: []structure.Entry{{ID: int32(min(c, d)), W: 1}}}
		if a != b {
			ex.Atoms = append(ex.Atoms, structure.Entry{ID: int32(max(a, b)), W: 1})
		}
		if c != d {
			ex.Compounds = append(ex.Compounds, structure.Entry{ID: int32(max(c, d)), W: 0.5})
		}
		ix.Examples = append(ix.Examples, ex)
	}
	return ix
}

// TestTMCDMatchesReference: TMCD's incremental atom counts decide every
// swap as counts from scratch do, on SCAN pools and on pools whose atoms
// are rare enough that swaps hit the atom constraint.
func TestTMCDMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ix    func(t *testing.T) *structure.Index
		seed  uint64
		steps int
	}{
		{"scan 40", func(t *testing.T) *structure.Index { return index(t, scanSample(40, 1)) }, 1, 3000},
		{"scan 120", func(t *testing.T) *structure.Index { return index(t, scanSample(120, 3)) }, 3, 2000},
		{"rare atoms 200", func(*testing.T) *structure.Index { return rareAtomIndex(200, 1) }, 1, 3000},
		{"rare atoms 400", func(*testing.T) *structure.Index { return rareAtomIndex(400, 2) }, 2, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := tc.ix(t)
			sizes := Sizes{Dev: 0.2, Test: 0.2}
			got, err := TMCD(context.Background(), ix, nil, TMCDConfig{Steps: tc.steps}, sizes, data.NewRand(tc.seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tmcdRef(ix, tc.steps, sizes, data.NewRand(tc.seed))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("TMCD split differs from the reference:\n got %v\nwant %v", got, want)
			}
		})
	}
}
