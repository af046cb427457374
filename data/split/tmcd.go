package split

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"compbench/data/structure"
	"compbench/progress"
)

// TMCDConfig configures the TMCD swap search (Shaw et al. 2021).
type TMCDConfig struct {
	// Steps is the number of swaps tried; 0 means 20 per pool example.
	Steps int `json:"steps"`
	// MaxLengthRatio, when positive, refuses swaps that take the evaluation
	// side's mean output length outside [1/r, r] times train's, as MCD's
	// band does; 0 leaves it free.
	MaxLengthRatio float64 `json:"max_length_ratio"`
	// LengthBuckets, when positive, only swaps examples of the same output
	// length stratum (see lengthStrata), so the random start's length
	// distribution on each side survives the search; 0 swaps freely.
	LengthBuckets int `json:"length_buckets"`
}

// DefaultTMCDConfig keeps MCD's default length band.
func DefaultTMCDConfig() TMCDConfig { return TMCDConfig{MaxLengthRatio: 1.5} }

// TMCD starts from a random split, balances atoms (every evaluation atom
// occurs in train), then tries Steps random train/evaluation swaps, keeping
// a swap when it raises D_C and keeps atoms balanced. D_C is updated
// incrementally from the two swapped examples' compounds only. compbench uses
// its weighted compounds (structure.Build, the same selection as mcd) as the
// divergence, the same as the mcd method and the statistics. Shaw et al.'s
// swaps drift toward short test examples, which carry the fewest compounds;
// with MaxLengthRatio set, a swap must also leave the evaluation side's mean
// output length within [1/r, r] times train's, and with LengthBuckets set, a
// swap pairs a random training example with a random evaluation example of
// the same length stratum, which keeps both sides' length distributions
// (lengths: output lengths, nil when both are 0). These are compbench's
// additions to the algorithm.
//
// The swaps check ctx every checkEvery*16 steps (a swap is cheap) and
// return its error once it ends.
func TMCD(ctx context.Context, ix *structure.Index, lengths []int, cfg TMCDConfig, sizes Sizes, rng *rand.Rand, rep progress.Reporter) (Assignment, error) {
	if cfg.Steps < 0 || cfg.LengthBuckets < 0 || cfg.MaxLengthRatio < 0 || (cfg.MaxLengthRatio > 0 && cfg.MaxLengthRatio < 1) {
		return Assignment{}, fmt.Errorf("tmcd: steps %d and length buckets %d must be >= 0, max length ratio %v 0 or >= 1", cfg.Steps, cfg.LengthBuckets, cfg.MaxLengthRatio)
	}
	n := len(ix.Examples)
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	if (cfg.LengthBuckets > 0 || cfg.MaxLengthRatio > 0) && len(lengths) != n {
		return Assignment{}, fmt.Errorf("tmcd: %d lengths for %d examples", len(lengths), n)
	}
	perm := rng.Perm(n)
	eval := append([]int(nil), perm[:nDev+nTest]...)
	train := append([]int(nil), perm[nDev+nTest:nDev+nTest+nTrain]...)
	if err := balanceAtoms(ix, train, eval, nil); err != nil {
		return Assignment{}, fmt.Errorf("tmcd: %w", err)
	}
	atoms, comps := exampleVectors(ix)
	cd := newPairDiv(len(ix.Compounds), structure.CompoundAlpha)
	ta := make([]float64, len(ix.Atoms)) // train atom counts
	for _, i := range train {
		cd.apply(comps[i], false, 1)
		for _, a := range atoms[i] {
			ta[a.ID] += a.W
		}
	}
	for _, i := range eval {
		cd.apply(comps[i], true, 1)
	}
	// evalAt lists the evaluation positions of each stratum; a swap keeps
	// every position's stratum.
	stratum, nStrata := lengthStrata(lengths, cfg.LengthBuckets)
	if cfg.LengthBuckets == 0 {
		stratum = make([]int, n)
	}
	evalAt := make([][]int, nStrata)
	for p, i := range eval {
		evalAt[stratum[i]] = append(evalAt[stratum[i]], p)
	}
	ls := &lengthSums{}
	if cfg.MaxLengthRatio > 0 {
		ls.of = lengths
		for _, i := range train {
			ls.apply(i, false, 1)
		}
		for _, i := range eval {
			ls.apply(i, true, 1)
		}
	}
	inBand := func() bool {
		r := ls.ratio(0, false, 0)
		return cfg.MaxLengthRatio == 0 || math.Abs(math.Log(r)) <= math.Log(cfg.MaxLengthRatio)
	}
	steps := cfg.Steps
	if steps == 0 {
		steps = 20 * n
	}
	bar := progress.Or(rep).Bar("tmcd", int64(steps))
	defer bar.Finish()
	cur := cd.current()
	for s := 0; s < steps; s++ {
		if s%(checkEvery*16) == 0 {
			if err := ctx.Err(); err != nil {
				return Assignment{}, err
			}
		}
		if s%1000 == 999 {
			bar.Add(1000)
			cd.resum()
			cur = cd.current()
			bar.SetExtra(fmt.Sprintf("D_C %.3f", cur))
		}
		ti := rng.IntN(len(train))
		at := evalAt[stratum[train[ti]]]
		if len(at) == 0 {
			continue
		}
		ei := at[rng.IntN(len(at))]
		i, j := train[ti], eval[ei]
		if !keepsAtoms(atoms[i], atoms[j], ta) {
			continue
		}
		if ls.of != nil {
			was := inBand()
			ls.apply(i, false, -1)
			ls.apply(j, true, -1)
			ls.apply(i, true, 1)
			ls.apply(j, false, 1)
			if was && !inBand() {
				ls.apply(i, true, -1)
				ls.apply(j, false, -1)
				ls.apply(i, false, 1)
				ls.apply(j, true, 1)
				continue
			}
		}
		cd.apply(comps[i], false, -1)
		cd.apply(comps[j], true, -1)
		cd.apply(comps[i], true, 1)
		cd.apply(comps[j], false, 1)
		if d := cd.current(); d > cur+1e-12 {
			cur = d
			train[ti], eval[ei] = j, i
			for _, a := range atoms[i] {
				ta[a.ID] -= a.W
			}
			for _, a := range atoms[j] {
				ta[a.ID] += a.W
			}
			continue
		}
		cd.apply(comps[i], true, -1)
		cd.apply(comps[j], false, -1)
		cd.apply(comps[i], false, 1)
		cd.apply(comps[j], true, 1)
		if ls.of != nil {
			ls.apply(i, true, -1)
			ls.apply(j, false, -1)
			ls.apply(i, false, 1)
			ls.apply(j, true, 1)
		}
	}
	return finish(train, eval, nDev, rng), nil
}

// keepsAtoms reports whether moving out (train to evaluation) and in
// (evaluation to train) leaves every atom of out still in train.
func keepsAtoms(out, in []structure.Entry, ta []float64) bool {
	for _, a := range out {
		left := ta[a.ID] - a.W
		for _, b := range in {
			if b.ID == a.ID {
				left += b.W
			}
		}
		if left <= 0 {
			return false
		}
	}
	return true
}

// balanceAtoms swaps examples until every atom of eval occurs in train: the
// first evaluation example with a missing atom trades places with the first
// training example (in order, or pool order when nil) none of whose atoms
// would then vanish from train. Each swap removes at least one missing atom
// and adds none (no atom count in train reaches zero), so one pass over eval
// suffices; it fails when no training example can go.
func balanceAtoms(ix *structure.Index, train, eval []int, order []int) error {
	ta := make([]float64, len(ix.Atoms))
	for _, i := range train {
		for _, a := range ix.Examples[i].Atoms {
			ta[a.ID] += a.W
		}
	}
	trainPos := make(map[int]int, len(train))
	for p, i := range train {
		trainPos[i] = p
	}
	if order == nil {
		order = train
	}
	order = append([]int(nil), order...)
	for ep := 0; ep < len(eval); ep++ {
		e := eval[ep]
		missing := false
		for _, a := range ix.Examples[e].Atoms {
			if ta[a.ID] == 0 {
				missing = true
				break
			}
		}
		if !missing {
			continue
		}
		swapped := false
		for op, t := range order {
			tp, ok := trainPos[t]
			if !ok || !keepsAtoms(ix.Examples[t].Atoms, ix.Examples[e].Atoms, ta) {
				continue
			}
			for _, a := range ix.Examples[t].Atoms {
				ta[a.ID] -= a.W
			}
			for _, a := range ix.Examples[e].Atoms {
				ta[a.ID] += a.W
			}
			train[tp], eval[ep] = e, t
			delete(trainPos, t)
			trainPos[e] = tp
			order = append(order[:op], order[op+1:]...)
			swapped = true
			break
		}
		if !swapped {
			return fmt.Errorf("cannot balance atoms: example %d has an atom missing from train and no training example can trade places with it", e)
		}
	}
	return nil
}
