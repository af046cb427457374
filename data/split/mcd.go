package split

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"compgen/data/structure"
	"compgen/progress"
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
	// RemoveEvery tries a removal after this many additions; 0 never.
	RemoveEvery int `json:"remove_every"`
	// RemoveCandidates is how many assigned examples a removal scores.
	RemoveCandidates int `json:"remove_candidates"`
}

// DefaultMCDConfig holds the paper's atom bound and compgen's search sizes.
func DefaultMCDConfig() MCDConfig {
	return MCDConfig{MaxAtomDiv: 0.02, Candidates: 300, RemoveEvery: 20, RemoveCandidates: 100}
}

// DefaultMCDSizes are Keysers et al.'s: train 40%, dev and test 10% each.
func DefaultMCDSizes() Sizes { return Sizes{Train: 0.4, Dev: 0.1, Test: 0.1} }

// Validate checks the configuration.
func (c MCDConfig) Validate() error {
	switch {
	case c.MaxAtomDiv <= 0 || c.MaxAtomDiv >= 1:
		return fmt.Errorf("max atom divergence %v: want (0, 1)", c.MaxAtomDiv)
	case c.TargetDiv < 0 || c.TargetDiv > 1:
		return fmt.Errorf("target divergence %v: want [0, 1]", c.TargetDiv)
	case c.Candidates < 0 || c.RemoveEvery < 0 || c.RemoveCandidates < 0:
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
// adds an example to train or to the evaluation side, keeping their sizes in
// the target ratio, each time choosing the example whose addition best
// raises D_C while keeping D_A within MaxAtomDiv (see score). Each step
// scores Candidates random unassigned examples rather than the whole pool,
// as the paper's implementation also works from a candidate subset (App. L);
// ties keep the first candidate, so they too are broken by the seed. Every
// RemoveEvery additions it considers removing one assigned example, and does
// when that improves the score, to escape local optima (§4). The evaluation
// side is finally divided into dev and test at random.
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

	const (
		free = iota
		inTrain
		inEval
	)
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
		fl := lists[free]
		m := cfg.Candidates
		if m == 0 || m > len(fl) {
			m = len(fl)
		}
		best, bestScore := -1, score{}
		for c := 0; c < m; c++ {
			j := c + rng.IntN(len(fl)-c)
			fl[c], fl[j] = fl[j], fl[c]
			pos[fl[c]], pos[fl[j]] = c, j
			i := fl[c]
			s := cfg.score(cd.what(comps[i], toEval, 1), ad.what(atoms[i], toEval, 1))
			if best < 0 || s.better(bestScore) {
				best, bestScore = i, s
			}
		}
		to := int8(inTrain)
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
	return finish(lists[inTrain], lists[inEval], nDev, rng), nil
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
