package split

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"compbench/data"
)

// Random assigns examples uniformly at random.
func Random(n int, sizes Sizes, rng *rand.Rand) (Assignment, error) {
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return Assignment{}, err
	}
	perm := rng.Perm(n)
	return finish(perm[nDev+nTest:nDev+nTest+nTrain], perm[:nDev+nTest], nDev, rng), nil
}

// LengthConfig configures the length split (Lake & Baroni; Keysers et al.
// §4 "output length" and "input length").
type LengthConfig struct {
	// By is "input" or "output": which string's whitespace tokens count.
	By string `json:"by"`
	// Threshold, when positive, sends every example longer than it to the
	// evaluation side; otherwise the threshold is chosen so the evaluation
	// side is as close as possible to Sizes.Dev+Sizes.Test of the pool.
	Threshold int `json:"threshold"`
}

// Length puts the longest examples in evaluation. A length is never split
// between train and evaluation, so with a target fraction the evaluation
// side is the set of lengths above the threshold whose size is closest to
// the target (ties: the larger threshold). With Sizes.Train set, both
// sides are then drawn down to their sizes (trimToSizes): Keysers et al.'s
// SCAN output length split is --threshold 22 --train-frac 0.4 (Lake &
// Baroni's cut: train up to 22 actions, test from 24).
func Length(pool []data.Record, cfg LengthConfig, sizes Sizes, rng *rand.Rand) (Assignment, error) {
	field, err := fieldOf(cfg.By)
	if err != nil {
		return Assignment{}, err
	}
	_, nDev, nTest, err := sizes.counts(len(pool))
	if err != nil {
		return Assignment{}, err
	}
	lens := make([]int, len(pool))
	for i := range pool {
		lens[i] = len(strings.Fields(field(&pool[i])))
	}
	thr := cfg.Threshold
	if thr <= 0 {
		sorted := append([]int(nil), lens...)
		sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
		want := nDev + nTest
		best, bestDiff := -1, len(pool)+1
		for i := 0; i < len(sorted); i++ {
			if i+1 < len(sorted) && sorted[i+1] == sorted[i] {
				continue // a boundary must fall between two lengths
			}
			cnt := i + 1 // examples longer than sorted[i+1], i.e. >= sorted[i]
			if d := abs(cnt - want); d < bestDiff && cnt < len(pool) {
				best, bestDiff = sorted[i]-1, d
			}
		}
		if best < 0 {
			return Assignment{}, fmt.Errorf("length split: every example has length %d; no threshold separates them", sorted[0])
		}
		thr = best
	}
	var train, eval []int
	for i, l := range lens {
		if l > thr {
			eval = append(eval, i)
		} else {
			train = append(train, i)
		}
	}
	if len(train) == 0 || len(eval) == 0 {
		return Assignment{}, fmt.Errorf("length split: threshold %d leaves %d train and %d evaluation examples", thr, len(train), len(eval))
	}
	if train, eval, err = trimToSizes(train, eval, sizes, len(pool), rng); err != nil {
		return Assignment{}, err
	}
	nDev = int(float64(len(eval))*sizes.Dev/(sizes.Dev+sizes.Test) + 0.5)
	return finish(train, eval, nDev, rng), nil
}

func fieldOf(by string) (func(*data.Record) string, error) {
	switch by {
	case "input":
		return func(r *data.Record) string { return r.Input }, nil
	case "output", "":
		return func(r *data.Record) string { return r.Output }, nil
	}
	return nil, fmt.Errorf("--by %q: want input or output", by)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
