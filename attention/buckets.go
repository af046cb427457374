package attention

import (
	"fmt"
	"math"
)

// Bucket maps the distance n = i - j between query position i and key
// position j to a relative-position bucket, as T5 does (Raffel et al. 2020;
// Shi et al. 2022, App. C): with bidirectional attention half the buckets
// hold keys before or at the query and half keys after it; within a half,
// distances below half its buckets get a bucket each, larger distances share
// log-spaced buckets up to maxDistance, and everything farther falls in the
// last bucket. A causal bucket gives every future key (n < 0) bucket 0.
//
// The log-spaced index is floor(log(n/exact)/log(maxDistance/exact) *
// (buckets-exact)) in exact arithmetic: a tiny slack before the floor keeps
// distances that land exactly on a boundary (n = 16 with 16 bidirectional
// buckets per side) from dropping a bucket through rounding.
func Bucket(n int, bidirectional bool, buckets, maxDistance int) int {
	ret := 0
	if bidirectional {
		buckets /= 2
		if n < 0 {
			ret = buckets
			n = -n
		}
	} else if n < 0 {
		n = 0
	}
	exact := buckets / 2
	if n < exact {
		return ret + n
	}
	large := exact + int(math.Log(float64(n)/float64(exact))/math.Log(float64(maxDistance)/float64(exact))*float64(buckets-exact)+1e-9)
	return ret + min(large, buckets-1)
}

// Buckets returns the bucket of every (query i, key j) pair, row-major
// [Tq*Tk], for ops.RelativeBias. Queries and keys are positions 0..Tq-1 and
// 0..Tk-1 of the same sequence.
func Buckets(tq, tk int, bidirectional bool, buckets, maxDistance int) []int {
	b := make([]int, 0, tq*tk)
	for i := range tq {
		for j := range tk {
			b = append(b, Bucket(i-j, bidirectional, buckets, maxDistance))
		}
	}
	return b
}

// checkBuckets validates a bucket configuration.
func checkBuckets(buckets, maxDistance int, bidirectional bool) error {
	minB := 2
	if bidirectional {
		minB = 4
	}
	if buckets < minB || (bidirectional && buckets%2 != 0) {
		return fmt.Errorf("relative attention: %d buckets; want at least %d (even when bidirectional)", buckets, minB)
	}
	exact := buckets / 2
	if bidirectional {
		exact = buckets / 4
	}
	if maxDistance <= exact {
		return fmt.Errorf("relative attention: maximum distance %d must exceed the %d exact buckets", maxDistance, exact)
	}
	return nil
}
