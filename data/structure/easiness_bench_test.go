package structure

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"compbench/data"
)

// covrLike draws a COVR-sized program: about 60 symbols, depth up to 5,
// functions with 0-3 arguments.
func covrLike(r *rand.Rand, depth int) *data.Tree {
	t := &data.Tree{Label: fmt.Sprintf("s%d", r.IntN(60))}
	if depth > 0 {
		k := r.IntN(4)
		if depth >= 4 {
			k = 1 + r.IntN(3)
		}
		for range k {
			t.Children = append(t.Children, covrLike(r, depth-1))
		}
	}
	return t
}

func benchSets(ntrain, ntest int) (train, test []*data.Tree) {
	r := data.NewRand(3)
	for range ntrain {
		train = append(train, covrLike(r, 4))
	}
	for range ntest {
		test = append(test, covrLike(r, 4))
	}
	return
}

// BenchmarkEasiness is the speed target of the evaluation issue: 62,000
// test programs against 3,000 training programs, under 10 s for 2-LS and
// under 60 s for 4-LS (one op = the whole set, training included).
func BenchmarkEasiness(b *testing.B) {
	train, test := benchSets(3000, 62000)
	for _, n := range []int{2, 3, 4} {
		b.Run(fmt.Sprintf("%d-LS", n), func(b *testing.B) {
			for b.Loop() {
				m, err := Train(train, Config{N: n, Variant: Full})
				if err != nil {
					b.Fatal(err)
				}
				m.Score(test)
			}
		})
	}
}
