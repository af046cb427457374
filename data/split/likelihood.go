package split

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/structure"
)

// LikelihoodConfig configures the likelihood split (Godbole & Jia §3).
type LikelihoodConfig struct {
	// LenBuckets, when > 1, controls for length: quantile buckets by token
	// length, each sending its share of the evaluation side.
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
	b, err := os.ReadFile(path)
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

// Likelihood puts the least likely Dev+Test of the pool in evaluation and
// the rest (or the most likely Train of it) in train. Ties in score are
// broken at random by the seed. With LenBuckets, examples are cut into that
// many equal-count buckets by length and each bucket sends
// floor(nEval*size/n) examples plus a random rounding, adjusted to hit nEval
// exactly. ix is needed only for AtomConstraint: then the least likely
// evaluation examples with a missing atom trade places with the least likely
// training examples that can go.
func Likelihood(pool []data.Record, scores map[string]float64, ix *structure.Index, cfg LikelihoodConfig, sizes Sizes, rng *rand.Rand) (Assignment, error) {
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
	less := func(i, j int) bool { // i less likely than j
		if key[i] != key[j] {
			return key[i] < key[j]
		}
		return tie[i] < tie[j]
	}
	nEval := nDev + nTest
	var buckets [][]int
	if cfg.LenBuckets > 1 {
		byLen := rng.Perm(n)
		sort.SliceStable(byLen, func(a, b int) bool {
			return len(strings.Fields(field(&pool[byLen[a]]))) < len(strings.Fields(field(&pool[byLen[b]])))
		})
		for b := 0; b < cfg.LenBuckets; b++ {
			buckets = append(buckets, byLen[b*n/cfg.LenBuckets:(b+1)*n/cfg.LenBuckets])
		}
	} else {
		buckets = [][]int{rng.Perm(n)}
	}
	quota := make([]int, len(buckets))
	total := 0
	for b, bk := range buckets {
		exact := float64(nEval) * float64(len(bk)) / float64(n)
		quota[b] = int(math.Floor(exact))
		if rng.Float64() < exact-float64(quota[b]) {
			quota[b]++
		}
		total += quota[b]
	}
	for total != nEval { // move the boundary of random buckets to hit nEval
		b := rng.IntN(len(buckets))
		if total > nEval && quota[b] > 0 {
			quota[b]--
			total--
		} else if total < nEval && quota[b] < len(buckets[b]) {
			quota[b]++
			total++
		}
	}
	var eval, rest []int
	for b, bk := range buckets {
		bk = append([]int(nil), bk...)
		sort.Slice(bk, func(x, y int) bool { return less(bk[x], bk[y]) })
		eval = append(eval, bk[:quota[b]]...)
		rest = append(rest, bk[quota[b]:]...)
	}
	sort.Slice(rest, func(x, y int) bool { return less(rest[y], rest[x]) }) // most likely first
	train := rest[:nTrain]
	if cfg.AtomConstraint {
		sort.Slice(eval, func(x, y int) bool { return less(eval[x], eval[y]) })
		order := append([]int(nil), train...)
		sort.Slice(order, func(x, y int) bool { return less(order[x], order[y]) })
		if err := balanceAtoms(ix, train, eval, order); err != nil {
			return Assignment{}, fmt.Errorf("likelihood: %w", err)
		}
	}
	return finish(train, eval, nDev, rng), nil
}
