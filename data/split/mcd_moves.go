package split

// The greedy search's moves: scoring candidates in parallel, the first
// division of the evaluation side, and the choice of candidates and of the
// example to remove (Keysers et al. §4; the search itself is MCD in mcd.go).

import (
	"math/rand/v2"
	"runtime"
	"sync"

	"compbench/data/structure"
)

// scorer scores candidate moves, spread over the available cores. Each
// candidate's score depends only on the state, and the best is chosen in
// candidate order (ties: the first), so the result does not depend on the
// number of workers.
type scorer struct {
	cfg          MCDConfig
	comps, atoms [][]structure.Entry
	cd, ad       *pairDiv
	ls           *lengthSums
	scores       []score
	workers      int
}

func newScorer(cfg MCDConfig, comps, atoms [][]structure.Entry, cd, ad *pairDiv, ls *lengthSums) *scorer {
	return &scorer{cfg: cfg, comps: comps, atoms: atoms, cd: cd, ad: ad, ls: ls, workers: scorerWorkers()}
}

// scorerWorkers is how many goroutines score candidates (tests vary it).
var scorerWorkers = func() int { return runtime.GOMAXPROCS(0) }

// eval fills scores for moving each of cands onto (sign 1) or off (sign
// -1) the training side (test false) or the evaluation side.
func (s *scorer) eval(cands []int, test []bool, sign float64) []score {
	s.scores = s.scores[:0]
	for range cands {
		s.scores = append(s.scores, score{})
	}
	one := func(lo, hi int) {
		for c := lo; c < hi; c++ {
			i := cands[c]
			s.scores[c] = s.cfg.scoreLen(s.cd.what(s.comps[i], test[c], sign), s.ad.what(s.atoms[i], test[c], sign), s.ls.ratio(i, test[c], sign))
		}
	}
	w := min(s.workers, len(cands)/32)
	if w <= 1 {
		one(0, len(cands))
		return s.scores
	}
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		lo, hi := k*len(cands)/w, (k+1)*len(cands)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			one(lo, hi)
		}()
	}
	wg.Wait()
	return s.scores
}

// best returns the candidate whose move scores highest (ties: the first).
func (s *scorer) best(cands []int, test bool, sign float64) int {
	sides := make([]bool, len(cands))
	for c := range sides {
		sides[c] = test
	}
	scores := s.eval(cands, sides, sign)
	best := 0
	for c := 1; c < len(cands); c++ {
		if scores[c].better(scores[best]) {
			best = c
		}
	}
	return cands[best]
}

// divide splits the evaluation side into dev (nDev) and test: of Divisions
// random divisions it keeps the first that scores best on train against
// test. ad and cd hold train against the whole evaluation side; their train
// halves are reused.
func divide(cfg MCDConfig, train, eval []int, nDev int, atoms, comps [][]structure.Entry, ad, cd *pairDiv, ls *lengthSums, rng *rand.Rand) Assignment {
	if nDev == 0 {
		return finish(train, eval, 0, rng)
	}
	var best Assignment
	var bestScore score
	for d := 0; d < max(cfg.Divisions, 1); d++ {
		a := finish(train, eval, nDev, rng)
		tc := newPairDiv(len(cd.t), cd.alpha)
		ta := newPairDiv(len(ad.t), ad.alpha)
		tl := &lengthSums{of: ls.of, sum: ls.sum, n: ls.n}
		tl.sum[1], tl.n[1] = 0, 0
		tc.adopt(cd)
		ta.adopt(ad)
		for _, i := range a.Test {
			tc.apply(comps[i], true, 1)
			ta.apply(atoms[i], true, 1)
			tl.apply(i, true, 1)
		}
		if s := cfg.scoreLen(tc.current(), ta.current(), tl.ratio(0, false, 0)); d == 0 || s.better(bestScore) {
			best, bestScore = a, s
		}
	}
	return best
}

// bestRemoval scores removing RemoveCandidates random assigned examples and
// returns the best if it beats keeping them all, else -1. It never empties a
// side.
func bestRemoval(cfg MCDConfig, sc *scorer, train, eval []int, rng *rand.Rand) int {
	if len(train) < 2 || len(eval) < 2 {
		return -1
	}
	cands := make([]int, cfg.RemoveCandidates)
	test := make([]bool, cfg.RemoveCandidates)
	for c := range cands {
		r := rng.IntN(len(train) + len(eval))
		if test[c] = r >= len(train); test[c] {
			cands[c] = eval[r-len(train)]
		} else {
			cands[c] = train[r]
		}
	}
	scores := sc.eval(cands, test, -1)
	best, bestScore := -1, cfg.scoreLen(sc.cd.current(), sc.ad.current(), sc.ls.ratio(0, false, 0))
	for c := range cands {
		if scores[c].better(bestScore) {
			best, bestScore = cands[c], scores[c]
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
