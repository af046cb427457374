package split

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"compbench/data/structure"
	"compbench/progress"
)

// MCDConfig configures the maximum-compound-divergence split.
type MCDConfig struct {
	// MaxAtomDiv is the largest atom divergence allowed (paper: 0.02).
	MaxAtomDiv float64 `json:"max_atom_div"`
	// TargetDiv, when positive, aims the compound divergence at this value
	// instead of maximizing it (for divergence sweeps).
	TargetDiv float64 `json:"target_div"`
	// Candidates is how many unassigned examples are scored per step, drawn
	// at random; 0 scores them all.
	Candidates int `json:"candidates"`
	// EvalCandidates, when positive, replaces Candidates for additions to
	// the evaluation side, which decide what the test holds and are a fifth
	// of the additions at the paper's 40:10.
	EvalCandidates int `json:"eval_candidates"`
	// RemoveEvery tries a removal after this many additions; 0 never.
	RemoveEvery int `json:"remove_every"`
	// RemoveCandidates is how many assigned examples a removal scores.
	RemoveCandidates int `json:"remove_candidates"`
	// Divisions is how many random divisions of the evaluation side into
	// dev and test are tried (see divide).
	Divisions int `json:"divisions"`
}

// DefaultMCDConfig holds the paper's atom bound and compbench's search sizes.
func DefaultMCDConfig() MCDConfig {
	return MCDConfig{MaxAtomDiv: 0.02, Candidates: 300, RemoveEvery: 2, RemoveCandidates: 100, Divisions: 20}
}

// DefaultMCDSizes are Keysers et al.'s: train 40% and validation plus test
// 10% of the pool (§5: "train and validation/test sizes of 40% and 10%",
// "about 8k train and 1k validation and test examples" for SCAN), so dev
// and test get 5% each, as in the published splits (SCAN 8,365 / 1,045 /
// 1,045; CFQ 95,743 / 11,968 / 11,968). The greedy alternates train and
// evaluation additions at 40:10.
func DefaultMCDSizes() Sizes { return Sizes{Train: 0.4, Dev: 0.05, Test: 0.05} }

// Validate checks the configuration.
func (c MCDConfig) Validate() error {
	switch {
	case c.MaxAtomDiv <= 0 || c.MaxAtomDiv >= 1:
		return fmt.Errorf("max atom divergence %v: want (0, 1)", c.MaxAtomDiv)
	case c.RemoveEvery == 1:
		return fmt.Errorf("remove-every 1 could undo every addition: want 0 (never) or >= 2")
	case c.TargetDiv < 0 || c.TargetDiv > 1:
		return fmt.Errorf("target divergence %v: want [0, 1]", c.TargetDiv)
	case c.Candidates < 0 || c.EvalCandidates < 0 || c.RemoveEvery < 0 || c.RemoveCandidates < 0 || c.Divisions < 0:
		return fmt.Errorf("candidate and removal counts must be >= 0")
	}
	return nil
}

// score orders states: any state within the atom bound beats any state
// outside it; within the bound, higher (or closer to target) compound
// divergence wins; outside it, lower atom divergence wins.
type score struct {
	ok  bool
	val float64
}

func (s score) better(t score) bool {
	if s.ok != t.ok {
		return s.ok
	}
	return s.val > t.val
}

func (c MCDConfig) score(dc, da float64) score {
	if da > c.MaxAtomDiv {
		return score{false, -da}
	}
	if c.TargetDiv > 0 {
		return score{true, -math.Abs(dc - c.TargetDiv)}
	}
	return score{true, dc}
}

// MCD builds a maximum compound divergence split by Keysers et al.'s greedy
// algorithm (§4): starting from one random training example, it alternately
// adds an example to train or to the evaluation side (test and dev), keeping
// their sizes in the target ratio (40:10 by default), each time choosing the
// example that keeps D_C highest (or closest to TargetDiv) while D_A stays
// within MaxAtomDiv (see score). Each step scores Candidates unassigned
// examples rather than the whole pool (see pickCandidates); ties keep the
// first candidate, so they too follow the seed. Every RemoveEvery additions
// it considers removing one assigned example, and does when that improves
// the score, to escape local optima (§4). The paper does not say how its
// validation set was drawn; compbench divides the evaluation side into dev
// and test at random, keeping the best of Divisions random divisions (see
// divide), since a random half can drift past the atom bound.
func MCD(ix *structure.Index, cfg MCDConfig, sizes Sizes, rng *rand.Rand, stderr io.Writer) (Assignment, error) {
	if err := cfg.Validate(); err != nil {
		return Assignment{}, err
	}
	n := len(ix.Examples)
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	nEval := nDev + nTest
	atoms, comps := exampleVectors(ix)
	ad := newPairDiv(len(ix.Atoms), structure.AtomAlpha)
	cd := newPairDiv(len(ix.Compounds), structure.CompoundAlpha)

	where := make([]int8, n)
	pos := make([]int, n) // index in its list
	lists := [3][]int{rng.Perm(n), nil, nil}
	for p, i := range lists[free] {
		pos[i] = p
	}
	move := func(i int, to int8) {
		from := where[i]
		l := lists[from]
		last := l[len(l)-1]
		l[pos[i]], pos[last] = last, pos[i]
		lists[from] = l[:len(l)-1]
		if from != free {
			cd.apply(comps[i], from == inEval, -1)
			ad.apply(atoms[i], from == inEval, -1)
		}
		where[i] = to
		pos[i] = len(lists[to])
		lists[to] = append(lists[to], i)
		if to != free {
			cd.apply(comps[i], to == inEval, 1)
			ad.apply(atoms[i], to == inEval, 1)
		}
	}

	bar := progress.New(stderr, "mcd", int64(nTrain+nEval))
	defer bar.Finish()
	move(lists[free][0], inTrain) // random first pick: the pool order is a permutation
	bar.Add(1)
	adds := 1
	for len(lists[inTrain]) < nTrain || len(lists[inEval]) < nEval {
		toEval := len(lists[inTrain]) >= nTrain ||
			(len(lists[inEval]) < nEval && float64(len(lists[inEval]))/float64(nEval) < float64(len(lists[inTrain]))/float64(nTrain))
		best, bestScore := -1, score{}
		for _, i := range pickCandidates(cfg, lists[free], pos, toEval, rng) {
			s := cfg.score(cd.what(comps[i], toEval, 1), ad.what(atoms[i], toEval, 1))
			if best < 0 || s.better(bestScore) {
				best, bestScore = i, s
			}
		}
		to := inTrain
		if toEval {
			to = inEval
		}
		move(best, to)
		bar.Add(1)
		adds++
		if adds%1000 == 0 {
			cd.resum()
			ad.resum()
			bar.SetExtra(fmt.Sprintf("D_C %.3f D_A %.3f", cd.current(), ad.current()))
		}
		if cfg.RemoveEvery > 0 && adds%cfg.RemoveEvery == 0 {
			if i := bestRemoval(cfg, lists[inTrain], lists[inEval], comps, atoms, cd, ad, rng); i >= 0 {
				move(i, free)
				bar.Add(-1)
			}
		}
	}
	return divide(cfg, lists[inTrain], lists[inEval], nDev, atoms, comps, ad, cd, rng), nil
}

// Sides of the MCD greedy.
const (
	free int8 = iota
	inTrain
	inEval
)

// divide splits the evaluation side into dev (nDev) and test: of Divisions
// random divisions it keeps the first that scores best on train against
// test. ad and cd hold train against the whole evaluation side; their train
// halves are reused.
func divide(cfg MCDConfig, train, eval []int, nDev int, atoms, comps [][]structure.Entry, ad, cd *pairDiv, rng *rand.Rand) Assignment {
	if nDev == 0 {
		return finish(train, eval, 0, rng)
	}
	var best Assignment
	var bestScore score
	for d := 0; d < max(cfg.Divisions, 1); d++ {
		a := finish(train, eval, nDev, rng)
		tc := newPairDiv(len(cd.a), cd.alpha)
		ta := newPairDiv(len(ad.a), ad.alpha)
		tc.adopt(cd)
		ta.adopt(ad)
		for _, i := range a.Test {
			tc.apply(comps[i], true, 1)
			ta.apply(atoms[i], true, 1)
		}
		if s := cfg.score(tc.current(), ta.current()); d == 0 || s.better(bestScore) {
			best, bestScore = a, s
		}
	}
	return best
}

// bestRemoval scores removing RemoveCandidates random assigned examples and
// returns the best if it beats keeping them all, else -1. It never empties a
// side.
func bestRemoval(cfg MCDConfig, train, eval []int, comps, atoms [][]structure.Entry, cd, ad *pairDiv, rng *rand.Rand) int {
	if len(train) < 2 || len(eval) < 2 {
		return -1
	}
	cur := cfg.score(cd.current(), ad.current())
	best, bestScore := -1, cur
	for c := 0; c < cfg.RemoveCandidates; c++ {
		r := rng.IntN(len(train) + len(eval))
		test := r >= len(train)
		i := 0
		if test {
			i = eval[r-len(train)]
		} else {
			i = train[r]
		}
		s := cfg.score(cd.what(comps[i], test, -1), ad.what(atoms[i], test, -1))
		if s.better(bestScore) {
			best, bestScore = i, s
		}
	}
	return best
}

// pickCandidates draws the examples a step scores: Candidates random
// unassigned ones (EvalCandidates for the evaluation side when set; all when
// 0). It reorders fl, keeping pos.
func pickCandidates(cfg MCDConfig, fl, pos []int, toEval bool, rng *rand.Rand) []int {
	m := cfg.Candidates
	if toEval && cfg.EvalCandidates > 0 {
		m = cfg.EvalCandidates
	}
	if m == 0 || m > len(fl) {
		m = len(fl)
	}
	for c := 0; c < m; c++ {
		j := c + rng.IntN(len(fl)-c)
		fl[c], fl[j] = fl[j], fl[c]
		pos[fl[c]], pos[fl[j]] = c, j
	}
	return fl[:m]
}
