package split

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Sizes are the parts' fractions of the pool. Methods build a train side
// and an evaluation side of Dev+Test, then divide the evaluation side into
// dev and test at random (as Keysers et al. §4 and Godbole & Jia §3 do).
type Sizes struct {
	// Train is the training fraction; 0 means everything not evaluated.
	Train float64 `json:"train_frac"`
	// Dev is the development fraction (may be 0).
	Dev float64 `json:"dev_frac"`
	// Test is the test fraction.
	Test float64 `json:"test_frac"`
}

// Validate checks the fractions.
func (s Sizes) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"train", s.Train}, {"dev", s.Dev}, {"test", s.Test}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v >= 1 {
			return fmt.Errorf("%s fraction %v: want a number in [0, 1)", f.name, f.v)
		}
	}
	if s.Test == 0 {
		return fmt.Errorf("test fraction must be positive")
	}
	if s.Train+s.Dev+s.Test > 1+1e-9 {
		return fmt.Errorf("fractions train %v + dev %v + test %v exceed 1", s.Train, s.Dev, s.Test)
	}
	if s.Train == 0 && s.Dev+s.Test >= 1 {
		return fmt.Errorf("dev %v + test %v leave no training data", s.Dev, s.Test)
	}
	return nil
}

// counts turns fractions into example counts for a pool of n.
func (s Sizes) counts(n int) (train, dev, test int, err error) {
	if err := s.Validate(); err != nil {
		return 0, 0, 0, err
	}
	dev = int(math.Round(s.Dev * float64(n)))
	test = int(math.Round(s.Test * float64(n)))
	if s.Train > 0 {
		train = int(math.Round(s.Train * float64(n)))
	} else {
		train = n - dev - test
	}
	if test < 1 || train < 1 || train+dev+test > n {
		return 0, 0, 0, fmt.Errorf("a pool of %d examples cannot give train %d, dev %d, test %d", n, train, dev, test)
	}
	return train, dev, test, nil
}

// finish sorts the train side, divides eval into dev (nDev at random) and
// test, and sorts each.
func finish(train, eval []int, nDev int, rng *rand.Rand) Assignment {
	eval = append([]int(nil), eval...)
	sort.Ints(eval)
	rng.Shuffle(len(eval), func(i, j int) { eval[i], eval[j] = eval[j], eval[i] })
	if nDev > len(eval) {
		nDev = len(eval)
	}
	a := Assignment{Train: append([]int(nil), train...), Dev: eval[:nDev], Test: eval[nDev:]}
	sort.Ints(a.Train)
	sort.Ints(a.Dev)
	sort.Ints(a.Test)
	return a
}

// trimToSizes draws the parts' sizes from the two sides when the training
// fraction is given: a random nTrain of train and nDev+nTest of eval, where
// a side holds more. Keysers et al. §4 build every split kind at "the same
// train and validation/test sizes of 40% and 10%" this way: the method
// decides which side an example may go to, the sizes how many go. With
// Sizes.Train 0 (train is "the rest") both sides are kept whole.
func trimToSizes(train, eval []int, sizes Sizes, n int, rng *rand.Rand) ([]int, []int, error) {
	if sizes.Train == 0 {
		return train, eval, nil
	}
	nTrain, nDev, nTest, err := sizes.counts(n)
	if err != nil {
		return nil, nil, err
	}
	draw := func(idx []int, k int) []int {
		if len(idx) <= k {
			return idx
		}
		idx = append([]int(nil), idx...)
		sort.Ints(idx)
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		return idx[:k]
	}
	return draw(train, nTrain), draw(eval, nDev+nTest), nil
}
