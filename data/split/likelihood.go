package split

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/structure"
)

// LikelihoodConfig configures the likelihood split (Godbole & Jia §3).
type LikelihoodConfig struct {
	// LenBuckets, when > 1, controls for length: quantile bins of the
	// token lengths (pandas qcut semantics, see lengthBuckets), each keeping
	// its share of the training side.
	LenBuckets int `json:"len_buckets"`
	// By is the string whose whitespace tokens give the length.
	By string `json:"by"`
	// AtomConstraint swaps examples until every evaluation atom is in train.
	AtomConstraint bool `json:"atom_constraint"`
	// Reverse sends the most likely examples to evaluation instead.
	Reverse bool `json:"reverse"`
}

// LoadScores reads JSONL lines {"id": ..., "score": ...} (higher = more
// likely), failing on bad lines, repeated ids and non-finite scores.
func LoadScores(path string) (map[string]float64, error) {
	b, err := data.ReadFileLimit(path, data.ScoreFile)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var s struct {
			ID    *string  `json:"id"`
			Score *float64 `json:"score"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, n+1, err)
		}
		if s.ID == nil || s.Score == nil {
			return nil, fmt.Errorf("%s: line %d: want {\"id\", \"score\"}", path, n+1)
		}
		if math.IsNaN(*s.Score) || math.IsInf(*s.Score, 0) {
			return nil, fmt.Errorf("%s: line %d: score is not finite", path, n+1)
		}
		if _, dup := out[*s.ID]; dup {
			return nil, fmt.Errorf("%s: line %d: id %q repeats", path, n+1, *s.ID)
		}
		out[*s.ID] = *s.Score
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no scores (empty file)", path)
	}
	return out, nil
}

// Likelihood follows Godbole & Jia's split script (§3; the public
// long-tail-likelihood-splits code, semantic_parsing/gen_ll_split.py):
//
//   - Examples are ranked by score, most likely first. Ties are broken at
//     random by the seed (the reference's stable sort keeps file order).
//   - The training side is the nSide = n - (Dev+Test) most likely examples.
//   - With LenBuckets > 1, examples are grouped into quantile bins of their
//     length (whitespace tokens of By) with pandas qcut semantics: see
//     lengthBuckets. Bucket b keeps floor(nSide*|b|/n) of its most likely
//     examples for training, plus one more with probability equal to the
//     fractional part. The training side is then listed least likely first
//     and the evaluation side most likely first; if the quotas add up to too
//     few, the most likely evaluation examples move to training, if too many
//     the least likely training examples move to evaluation, until training
//     holds exactly nSide. The boundary moves by likelihood, not bucket by
//     bucket.
//   - With a Train fraction that leaves part of the pool unused, the
//     training side keeps only its nTrain most likely examples (an extension;
//     the reference uses the whole pool).
//   - AtomConstraint runs the atom balancing of the NQG split tools the
//     reference calls (balanceAtomsLikelihood), on the two sides in the
//     orders above.
//   - The evaluation side is shuffled by the seed and divided into dev and
//     test; the reference halves it (dev the smaller half when odd), which
//     equal --dev-frac and --test-frac reproduce.
//
// ix is needed only for AtomConstraint.
//
// The atom balancing, the one long loop, checks ctx every checkEvery swaps.
func Likelihood(ctx context.Context, pool []data.Record, scores map[string]float64, ix *structure.Index, cfg LikelihoodConfig, sizes Sizes, rng *rand.Rand) (Assignment, error) {
	return likelihood(ctx, pool, scores, ix, cfg, sizes, rng, func(p float64) bool { return rng.Float64() < p })
}

// likelihood is Likelihood with the quota rounding as a parameter: roundUp
// is asked once per bucket whose training quota has a fractional part, in
// bucket order, with that part (tests pass fixed choices).
func likelihood(ctx context.Context, pool []data.Record, scores map[string]float64, ix *structure.Index, cfg LikelihoodConfig, sizes Sizes, rng *rand.Rand, roundUp func(frac float64) bool) (Assignment, error) {
	n := len(pool)
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	if cfg.LenBuckets < 0 || cfg.LenBuckets > n {
		return Assignment{}, fmt.Errorf("likelihood: %d length buckets for %d examples", cfg.LenBuckets, n)
	}
	if cfg.AtomConstraint && ix == nil {
		return Assignment{}, fmt.Errorf("likelihood: --atom-constraint needs program trees")
	}
	field, err := fieldOf(cfg.By)
	if err != nil {
		return Assignment{}, err
	}
	key := make([]float64, n) // higher = more likely to train
	for i := range pool {
		s, ok := scores[pool[i].ID]
		if !ok {
			return Assignment{}, fmt.Errorf("likelihood: no score for id %q", pool[i].ID)
		}
		if cfg.Reverse {
			s = -s
		}
		key[i] = s
	}
	tie := rng.Perm(n)
	// order lists the pool most likely first.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	moreLikely := func(i, j int) bool {
		if key[i] != key[j] {
			return key[i] > key[j]
		}
		return tie[i] < tie[j]
	}
	sort.Slice(order, func(x, y int) bool { return moreLikely(order[x], order[y]) })
	nEval := nDev + nTest
	nSide := n - nEval
	// train is listed least likely first, eval most likely first: the
	// orders the reference hands to the atom balancing.
	var train, eval []int
	if cfg.LenBuckets > 1 {
		lens := make([]float64, n)
		for i := range pool {
			lens[i] = float64(len(strings.Fields(field(&pool[i]))))
		}
		label, nb := lengthBuckets(lens, cfg.LenBuckets)
		members := make([][]int, nb)
		for _, i := range order {
			members[label[i]] = append(members[label[i]], i)
		}
		for _, m := range members {
			if len(m) == 0 {
				continue
			}
			q := nSide * len(m) / n
			if r := nSide * len(m) % n; r > 0 && roundUp(float64(r)/float64(n)) {
				q++
			}
			train = append(train, m[:q]...)
			eval = append(eval, m[q:]...)
		}
		sort.Slice(train, func(x, y int) bool { return moreLikely(train[y], train[x]) })
		sort.Slice(eval, func(x, y int) bool { return moreLikely(eval[x], eval[y]) })
		switch {
		case len(train) < nSide:
			d := nSide - len(train)
			train = append(append([]int(nil), eval[:d]...), train...)
			eval = eval[d:]
		case len(train) > nSide:
			d := len(train) - nSide
			eval = append(append([]int(nil), train[:d]...), eval...)
			train = train[d:]
		}
	} else {
		train = make([]int, nSide)
		for p := range nSide {
			train[p] = order[nSide-1-p]
		}
		eval = append([]int(nil), order[nSide:]...)
	}
	if nTrain < len(train) { // drop the least likely training examples
		keep := map[int]bool{}
		byLikelihood := append([]int(nil), train...)
		sort.Slice(byLikelihood, func(x, y int) bool { return moreLikely(byLikelihood[x], byLikelihood[y]) })
		for _, i := range byLikelihood[:nTrain] {
			keep[i] = true
		}
		kept := train[:0]
		for _, i := range train {
			if keep[i] {
				kept = append(kept, i)
			}
		}
		train = kept
	}
	if cfg.AtomConstraint {
		if train, eval, err = balanceAtomsLikelihood(ctx, ix, train, eval, maxBalanceSwaps); err != nil {
			return Assignment{}, fmt.Errorf("likelihood: %w", err)
		}
	}
	return finish(train, eval, nDev, rng), nil
}

// lengthBuckets assigns each length to a quantile bin as pandas' qcut does
// with k quantiles and integer labels: the edges are the 0, 1/k, ..., 1
// quantiles of the lengths (linear interpolation between order statistics,
// position (n-1)q); equal edges are merged into one, so fewer bins may
// result and every example of one length falls in one bin; bins are closed
// on the right, and the lowest edge belongs to the first bin. It returns
// the bin of each length and the number of bins (a bin may be empty when
// there are more bins than distinct positions; callers skip empty bins).
//
// The reference script calls qcut with pandas' default duplicates="raise",
// which stops with an error when two edges coincide; merging them is
// pandas' duplicates="drop", the only behaviour that gives a split then.
func lengthBuckets(lens []float64, k int) (label []int, nb int) {
	n := len(lens)
	label = make([]int, n)
	if n == 0 {
		return label, 0
	}
	s := append([]float64(nil), lens...)
	sort.Float64s(s)
	var edges []float64
	for j := 0; j <= k; j++ {
		pos := float64(n-1) * (float64(j) / float64(k))
		lo := int(math.Floor(pos))
		hi := min(lo+1, n-1)
		e := s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
		if len(edges) == 0 || e != edges[len(edges)-1] {
			edges = append(edges, e)
		}
	}
	if len(edges) == 1 { // every length equal: one bin
		return label, 1
	}
	for i, l := range lens {
		// first edge >= l (searchsorted left); the lowest edge joins bin 0.
		b := sort.SearchFloat64s(edges, l)
		label[i] = max(b-1, 0)
	}
	return label, len(edges) - 1
}

// maxBalanceSwaps is the reference's iteration limit for atom balancing.
const maxBalanceSwaps = 10000

// balanceAtomsLikelihood is the atom balancing of the NQG split tools
// (mcd_utils.balance_atoms), which Godbole & Jia's script calls with the
// training side listed least likely first and the evaluation side most
// likely first. While some atom of eval is missing from train, one swap:
// the first training example none of whose atoms occurs in only one
// training example goes to the end of eval, and the first evaluation
// example with a missing atom goes to the end of train. Atoms count once
// per example. It fails when no example qualifies on either side or after
// maxSwaps swaps, as the reference does.
func balanceAtomsLikelihood(ctx context.Context, ix *structure.Index, train, eval []int, maxSwaps int) ([]int, []int, error) {
	train = append([]int(nil), train...)
	eval = append([]int(nil), eval...)
	inTrain := make([]int, len(ix.Atoms)) // training examples holding the atom
	for _, i := range train {
		for _, a := range ix.Examples[i].Atoms {
			inTrain[a.ID]++
		}
	}
	missing := func(i int) bool {
		for _, a := range ix.Examples[i].Atoms {
			if inTrain[a.ID] == 0 {
				return true
			}
		}
		return false
	}
	for swaps := 0; ; swaps++ {
		if swaps%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if swaps == maxSwaps { // the reference gives up here, balanced or not
			return nil, nil, fmt.Errorf("cannot balance atoms in %d swaps", maxSwaps)
		}
		ep := slices.IndexFunc(eval, missing)
		if ep < 0 {
			return train, eval, nil
		}
		tp := slices.IndexFunc(train, func(i int) bool {
			for _, a := range ix.Examples[i].Atoms {
				if inTrain[a.ID] <= 1 {
					return false
				}
			}
			return true
		})
		if tp < 0 {
			return nil, nil, fmt.Errorf("cannot balance atoms: every training example holds an atom no other training example has")
		}
		t, e := train[tp], eval[ep]
		for _, a := range ix.Examples[t].Atoms {
			inTrain[a.ID]--
		}
		for _, a := range ix.Examples[e].Atoms {
			inTrain[a.ID]++
		}
		train = append(slices.Delete(train, tp, tp+1), e)
		eval = append(slices.Delete(eval, ep, ep+1), t)
	}
}
