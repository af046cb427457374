package split

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

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
	// MaxLengthRatio, when positive, bounds the ratio of mean output
	// lengths between the evaluation side and train to [1/r, r]: a state
	// outside the band scores as one outside the atom bound (see score).
	MaxLengthRatio float64 `json:"max_length_ratio"`
	// MinLengthRatio, when positive, replaces the band's lower end 1/r:
	// the evaluation side's mean output length must be at least this many
	// times train's. Keysers et al.'s SCAN MCD splits all have longer test
	// outputs (Table 3: train/test 0.63-0.76, i.e. test/train 1.32-1.59),
	// which --min-length-ratio 1.32 --max-length-ratio 1.59 holds.
	MinLengthRatio float64 `json:"min_length_ratio,omitempty"`
	// LengthBuckets, when positive, keeps each side's output-length
	// distribution at the pool's by drawing candidates from that many
	// length strata (see MCD); 0 leaves the distribution free.
	LengthBuckets int `json:"length_buckets"`
	// Polish is how many replacement steps follow the greedy (see mcdSearch):
	// each takes one random assigned example out and puts the best of
	// Candidates free examples of its length stratum in on the same side,
	// kept only when the score improves; 0 skips the phase.
	Polish int `json:"polish"`
	// Restarts is how many times the greedy runs (each with its polish),
	// keeping the best end state; 0 chooses by the pool's size (see
	// AutoRestarts).
	Restarts int `json:"restarts"`
}

// DefaultMCDConfig holds the paper's atom bound and compbench's search sizes.
func DefaultMCDConfig() MCDConfig {
	return MCDConfig{MaxAtomDiv: 0.02, Candidates: 300, RemoveEvery: 2, RemoveCandidates: 100, Divisions: 20, MaxLengthRatio: 1.5}
}

// DefaultMCDSizes are Keysers et al.'s: train 40% and validation plus test
// 10% of the pool (§5: "train and validation/test sizes of 40% and 10%",
// "about 8k train and 1k validation and test examples" for SCAN), so dev
// and test get 5% each, as in the published splits (SCAN 8,365 / 1,045 /
// 1,045; CFQ 95,743 / 11,968 / 11,968). The greedy alternates train and
// evaluation additions at 40:10.
func DefaultMCDSizes() Sizes { return Sizes{Train: 0.4, Dev: 0.05, Test: 0.05} }

// MCDKeepAllPool is the largest pool on which MCD keeps every compound by
// default (see MCDCompoundKeep).
const MCDKeepAllPool = 50000

// MCDCompoundKeep is the compound selection (structure.CompoundConfig.Keep)
// MCD uses when none is asked for, on a pool of n examples: every compound
// up to MCDKeepAllPool examples, beyond that the heaviest holding 99% of
// the pool's weight (structure.KeepAuto).
//
// Keysers et al. (§2.1) "keep only the [compounds] with highest sum of
// weights" out of "a large subset of subgraphs", which keeps the compound
// set tractable on CFQ; §4's greedy then maximizes D_C over what is kept.
// The dropped compounds weigh near 0 one by one (their occurrences lie
// inside one larger compound) but are many (6,448 of 13,305 on original
// SCAN), and D_C (alpha 0.1) is measured over the kept set, so dropping
// them changes the divergence the greedy reaches: on original SCAN
// (tasks.txt, seed 1) D_C 0.692 with every compound against 0.665 with
// the heaviest 99%, on 20,000 generated SCAN commands 0.805 against
// 0.806. The greedy's time does not change (it skips the zero weights
// that make up most of the dropped entries), but the index's memory does:
// about 20% more peak memory with every compound on those 20,000 commands. So
// small pools, where memory is no concern (SCAN's 20,910 commands, COGS),
// keep every compound, and large pools keep the paper's selection
// (docs/splits.md, "Keep").
func MCDCompoundKeep(n int) int {
	if n <= MCDKeepAllPool {
		return 0
	}
	return structure.KeepAuto
}

// Validate checks the configuration.
func (c MCDConfig) Validate() error {
	switch {
	case c.MaxAtomDiv <= 0 || c.MaxAtomDiv >= 1:
		return fmt.Errorf("max atom divergence %v: want (0, 1)", c.MaxAtomDiv)
	case c.RemoveEvery == 1:
		return fmt.Errorf("remove-every 1 could undo every addition: want 0 (never) or >= 2")
	case c.MaxLengthRatio != 0 && c.MaxLengthRatio < 1:
		return fmt.Errorf("max length ratio %v: want 0 (off) or >= 1", c.MaxLengthRatio)
	case c.MinLengthRatio < 0 || math.IsNaN(c.MinLengthRatio) || (c.MinLengthRatio > 0 && c.MaxLengthRatio > 0 && c.MinLengthRatio > c.MaxLengthRatio):
		return fmt.Errorf("min length ratio %v: want 0 (1/max) or a positive value at most the max length ratio %v", c.MinLengthRatio, c.MaxLengthRatio)
	case c.TargetDiv < 0 || c.TargetDiv > 1:
		return fmt.Errorf("target divergence %v: want [0, 1]", c.TargetDiv)
	case c.Candidates < 0 || c.EvalCandidates < 0 || c.RemoveEvery < 0 || c.RemoveCandidates < 0 || c.Divisions < 0 || c.LengthBuckets < 0 || c.Polish < 0 || c.Restarts < 0:
		return fmt.Errorf("candidate and removal counts must be >= 0")
	}
	return nil
}

// score orders states: any state within the atom bound (and the length
// band, when set) beats any state outside; within, higher (or closer to
// target) compound divergence wins; outside, the smaller violation wins:
// D_A beyond the bound plus the length ratio's log distance outside the
// band.
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

func (c MCDConfig) score(dc, da float64) score { return c.scoreLen(dc, da, 1) }

// scoreLen scores a state whose evaluation side's mean output length is
// ratio times train's.
func (c MCDConfig) scoreLen(dc, da, ratio float64) score {
	excess := 0.0
	if r := c.MaxLengthRatio; r > 0 && ratio > 0 {
		// In logs: -log r is the symmetric band's lower end (1/r) exactly,
		// so the default band scores bit for bit as |log ratio| - log r.
		logLo := -math.Log(r)
		if c.MinLengthRatio > 0 {
			logLo = math.Log(c.MinLengthRatio)
		}
		excess = max(0, logLo-math.Log(ratio), math.Log(ratio)-math.Log(r))
	}
	if da > c.MaxAtomDiv || excess > 0 {
		return score{false, -max(0, da-c.MaxAtomDiv) - excess}
	}
	if c.TargetDiv > 0 {
		return score{true, -math.Abs(dc - c.TargetDiv)}
	}
	return score{true, dc}
}

// lengths keeps each side's summed output length, to score the length
// ratio of a move in O(1).
type lengthSums struct {
	of     []int      // output length per example (nil: no band)
	sum, n [2]float64 // train, evaluation
}

func (l *lengthSums) apply(i int, test bool, sign float64) {
	if l.of == nil {
		return
	}
	s := 0
	if test {
		s = 1
	}
	l.sum[s] += sign * float64(l.of[i])
	l.n[s] += sign
}

// ratio is the evaluation side's mean length over train's after moving i
// (sign 1 in, -1 out, 0 no move); 1 when a side is empty or there is no band.
func (l *lengthSums) ratio(i int, test bool, sign float64) float64 {
	if l.of == nil {
		return 1
	}
	sum, n := l.sum, l.n
	if sign != 0 {
		s := 0
		if test {
			s = 1
		}
		sum[s] += sign * float64(l.of[i])
		n[s] += sign
	}
	if n[0] <= 0 || n[1] <= 0 || sum[0] <= 0 {
		return 1
	}
	return (sum[1] / n[1]) / (sum[0] / n[0])
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
//
// lengths holds each example's output length. A greedy left free fills
// test with whichever lengths carry the most (or fewest) compounds, a
// length split in disguise (on generated SCAN the test outputs come out
// twice as long as train's). With MaxLengthRatio r set (the default 1.5),
// a move that takes the evaluation side's mean output length outside
// [1/r, r] times train's scores as a bound violation, like D_A past
// MaxAtomDiv. With LengthBuckets set, the pool is also cut into that many
// length strata (lengthStrata) and each addition draws its candidates from
// the stratum its side holds least of relative to the pool, so both sides
// keep the pool's length distribution (a stricter control that costs more
// divergence). The paper constrains neither; both are compbench's
// additions, off with 0 (lengths may then be nil). So are Restarts (the
// greedy run several times, the best end state kept) and Polish
// (replacements after the greedy); see mcdSearch and AutoRestarts.
//
// The search checks ctx every checkEvery moves and returns its error once
// it ends.
func MCD(ctx context.Context, ix *structure.Index, lengths []int, cfg MCDConfig, sizes Sizes, rng *rand.Rand, rep progress.Reporter) (Assignment, error) {
	if err := cfg.Validate(); err != nil {
		return Assignment{}, err
	}
	n := len(ix.Examples)
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	if (cfg.LengthBuckets > 0 || cfg.MaxLengthRatio > 0) && len(lengths) != n {
		return Assignment{}, fmt.Errorf("mcd: %d lengths for %d examples", len(lengths), n)
	}
	atoms, comps := exampleVectors(ix)
	// Restarts: the greedy's first picks decide which local optimum it
	// lands in (on original SCAN the seed alone moves D_C by up to 0.05),
	// so it runs Restarts times on one random stream and keeps the state
	// that scores best on train against the whole evaluation side. The
	// first run draws exactly what a single run draws, so Restarts 1 gives
	// the same split as before restarts existed.
	var best *mcdState
	runs := cfg.Restarts
	if runs == 0 {
		entries := 0
		for _, c := range comps {
			entries += len(c)
		}
		runs = AutoRestarts(entries)
	}
	for r := 0; r < runs; r++ {
		label := "mcd"
		if runs > 1 {
			label = fmt.Sprintf("mcd %d/%d", r+1, runs)
		}
		st, err := mcdSearch(ctx, ix, cfg, lengths, nTrain, nDev+nTest, atoms, comps, rng, rep, label)
		if err != nil {
			return Assignment{}, err
		}
		if best == nil || st.score.better(best.score) {
			best = st
		}
	}
	return divide(cfg, best.train, best.eval, nDev, atoms, comps, best.ad, best.cd, best.ls, rng), nil
}

// RestartEntries is the pool size, in compound entries of positive weight
// summed over its examples, up to which MCD restarts by default: a greedy
// run over it takes seconds (Lake & Baroni's 20,910 SCAN commands hold
// 0.90M entries and run in about 10 s of CPU; 20,000 generated SCAN
// commands hold 7.3M and take about 40 s).
const RestartEntries = 3_000_000

// AutoRestarts is MCD's default number of greedy runs for a pool whose
// examples hold this many compound entries of positive weight: 3 up to
// RestartEntries, else 1. Measured on
// original SCAN in tasks.txt order (docs/splits.md): D_C 0.713, 0.711 and
// 0.707 at seeds 1-3 with 3 runs, against 0.692, 0.708 and 0.707 with one,
// for twice the time; on larger pools one run already lands high (0.81 on
// generated SCAN) and three would triple minutes of search.
func AutoRestarts(entries int) int {
	if entries <= RestartEntries {
		return 3
	}
	return 1
}

// mcdState is where one greedy run ends: its train and evaluation sides,
// their divergence states and their score.
type mcdState struct {
	train, eval []int
	cd, ad      *pairDiv
	ls          *lengthSums
	score       score
}

// mcdSearch runs MCD's greedy (and the polish phase) once, drawing from rng.
func mcdSearch(ctx context.Context, ix *structure.Index, cfg MCDConfig, lengths []int, nTrain, nEval int, atoms, comps [][]structure.Entry, rng *rand.Rand, rep progress.Reporter, label string) (*mcdState, error) {
	n := len(ix.Examples)
	ls := &lengthSums{}
	if cfg.MaxLengthRatio > 0 {
		ls.of = lengths
	}
	ad := newCachedPairDiv(len(ix.Atoms), structure.AtomAlpha, atoms)
	cd := newCachedPairDiv(len(ix.Compounds), structure.CompoundAlpha, comps)

	stratum, nStrata := lengthStrata(lengths, cfg.LengthBuckets)
	share := make([]float64, nStrata) // each stratum's share of the pool
	// lists[0..nStrata-1] hold the free examples of each stratum; then train
	// and the evaluation side.
	lTrain, lEval := nStrata, nStrata+1
	lists := make([][]int, nStrata+2)
	where := make([]int, n) // index into lists
	pos := make([]int, n)   // index in its list
	for _, i := range rng.Perm(n) {
		s := stratum[i]
		share[s] += 1 / float64(n)
		where[i], pos[i] = s, len(lists[s])
		lists[s] = append(lists[s], i)
	}
	held := [2][]int{make([]int, nStrata), make([]int, nStrata)} // per side and stratum
	move := func(i int, to int) {
		from := where[i]
		l := lists[from]
		last := l[len(l)-1]
		l[pos[i]], pos[last] = last, pos[i]
		lists[from] = l[:len(l)-1]
		if from >= nStrata {
			cd.apply(comps[i], from == lEval, -1)
			ad.apply(atoms[i], from == lEval, -1)
			ls.apply(i, from == lEval, -1)
			held[from-nStrata][stratum[i]]--
		}
		if to < nStrata {
			to = stratum[i]
		}
		where[i] = to
		pos[i] = len(lists[to])
		lists[to] = append(lists[to], i)
		if to >= nStrata {
			cd.apply(comps[i], to == lEval, 1)
			ad.apply(atoms[i], to == lEval, 1)
			ls.apply(i, to == lEval, 1)
			held[to-nStrata][stratum[i]]++
		}
	}
	// next picks the stratum an addition to side draws from: the one whose
	// count lags its pool share the most, among those with free examples.
	next := func(side int) int {
		best, bestGap := -1, 0.0
		size := float64(len(lists[nStrata+side]) + 1)
		for s := 0; s < nStrata; s++ {
			if len(lists[s]) == 0 {
				continue
			}
			if gap := share[s]*size - float64(held[side][s]); best < 0 || gap > bestGap {
				best, bestGap = s, gap
			}
		}
		return best
	}

	bar := progress.Or(rep).Bar(label, int64(nTrain+nEval))
	defer bar.Finish()
	move(lists[next(0)][0], lTrain) // random first pick: each free list is in random order
	bar.Add(1)
	adds := 1
	sc := newScorer(cfg, comps, atoms, cd, ad, ls)
	for len(lists[lTrain]) < nTrain || len(lists[lEval]) < nEval {
		toEval := len(lists[lTrain]) >= nTrain ||
			(len(lists[lEval]) < nEval && float64(len(lists[lEval]))/float64(nEval) < float64(len(lists[lTrain]))/float64(nTrain))
		side, to := 0, lTrain
		if toEval {
			side, to = 1, lEval
		}
		s := next(side)
		best := sc.best(pickCandidates(cfg, lists[s], pos, toEval, rng), toEval, 1)
		move(best, to)
		bar.Add(1)
		adds++
		if adds%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if adds%1000 == 0 {
			cd.resum()
			ad.resum()
			bar.SetExtra(fmt.Sprintf("D_C %.3f D_A %.3f", cd.current(), ad.current()))
		}
		if cfg.RemoveEvery > 0 && adds%cfg.RemoveEvery == 0 {
			if i := bestRemoval(cfg, sc, lists[lTrain], lists[lEval], rng); i >= 0 {
				move(i, 0)
				bar.Add(-1)
			}
		}
	}
	state := func() score { return cfg.scoreLen(cd.current(), ad.current(), ls.ratio(0, false, 0)) }
	if cfg.Polish > 0 {
		bar.Finish()
		pbar := progress.Or(rep).Bar(label+" polish", int64(cfg.Polish))
		cur := state()
		for step := 0; step < cfg.Polish; step++ {
			if step%checkEvery == checkEvery-1 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			// Either side with equal chance (the evaluation side is a fifth
			// of the split but weighs as much in the divergence), one of its
			// members at random, then the best free replacement from its
			// stratum.
			side, to := 0, lTrain
			if rng.IntN(2) == 1 {
				side, to = 1, lEval
			}
			out := lists[to][rng.IntN(len(lists[to]))]
			if len(lists[stratum[out]]) == 0 {
				continue
			}
			move(out, 0)
			// The free list as it is now (out in it; append may have moved
			// it): its order and pos change together.
			in := sc.best(pickCandidates(cfg, lists[stratum[out]], pos, side == 1, rng), side == 1, 1)
			move(in, to)
			if s := state(); s.better(cur) {
				cur = s
			} else {
				move(in, 0)
				move(out, to)
			}
			if step%1000 == 999 {
				cd.resum()
				ad.resum()
				cur = state()
				pbar.Add(1000)
				pbar.SetExtra(fmt.Sprintf("D_C %.3f D_A %.3f", cd.current(), ad.current()))
			}
		}
		pbar.Finish()
	}
	cd.resum()
	ad.resum()
	return &mcdState{train: lists[lTrain], eval: lists[lEval], cd: cd, ad: ad, ls: ls, score: state()}, nil
}

// checkEvery is how many moves or swaps the searches make between looks
// at their context: a look costs a lock, a move far more.
const checkEvery = 64

// lengthStrata cuts examples into at most k strata of nearly equal size by
// length, a length never straddling two strata (quantile bins as pandas'
// qcut forms them, duplicate edges collapsing): stratum s holds the lengths
// whose midpoint rank falls in [s/k, (s+1)/k) of the pool. k 0 (or no
// lengths) gives one stratum.
func lengthStrata(lengths []int, k int) ([]int, int) {
	n := len(lengths)
	st := make([]int, max(n, 0))
	if k <= 1 || n == 0 {
		return st, 1
	}
	count := map[int]int{}
	for _, l := range lengths {
		count[l]++
	}
	ls := make([]int, 0, len(count))
	for l := range count {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	of := make(map[int]int, len(ls))
	below, last, used := 0, -1, 0
	for _, l := range ls {
		mid := (float64(below) + float64(count[l])/2) / float64(n)
		s := min(int(mid*float64(k)), k-1)
		if s != last {
			last = s
			used++
		}
		of[l] = used - 1
		below += count[l]
	}
	for i, l := range lengths {
		st[i] = of[l]
	}
	return st, used
}
