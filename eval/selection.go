package eval

import (
	"fmt"
	"math/rand/v2"

	"compbench/data"
	"compbench/data/structure"
)

// Strategy is a training-set selection strategy of Bogin et al. §6.2.
type Strategy string

const (
	// SelectNLS repeatedly adds an example holding the local structure
	// least similar to the structures already selected.
	SelectNLS Strategy = "nls"
	// SelectRandom samples without replacement.
	SelectRandom Strategy = "random"
)

// SelectConfig configures Select.
type SelectConfig struct {
	// Budget is B, the number of examples to select.
	Budget int
	// Strategy is nls or random.
	Strategy Strategy
	// N is the local-structure size for nls (2, 3 or 4).
	N int
}

// Validate checks the fields against a pool of size n.
func (c SelectConfig) Validate(n int) error {
	if c.Budget < 1 || c.Budget > n {
		return fmt.Errorf("budget must be between 1 and the pool size %d, not %d", n, c.Budget)
	}
	if c.Strategy != SelectNLS && c.Strategy != SelectRandom {
		return fmt.Errorf("unknown strategy %q (want nls or random)", c.Strategy)
	}
	if c.N < 2 || c.N > 4 {
		return fmt.Errorf("n must be 2, 3 or 4, not %d", c.N)
	}
	return nil
}

// Select returns the pool indices chosen, in the order chosen.
//
// nls (§6.2): starting from an empty set, find the structure of the pool
// least similar to every structure already selected (a structure's
// similarity to the selection is its max structure similarity to a
// selected structure; selected ones have 1), ties broken at random, and
// add a random unselected example containing it. Decision: symbol
// similarities use contexts from the whole pool, as the selection is
// empty at first and the pool is what is known.
func Select(trees []*data.Tree, cfg SelectConfig, rng *rand.Rand) ([]int, error) {
	if err := cfg.Validate(len(trees)); err != nil {
		return nil, err
	}
	if cfg.Strategy == SelectRandom {
		return rng.Perm(len(trees))[:cfg.Budget], nil
	}
	m, err := structure.Train(trees, structure.Config{N: cfg.N, Variant: structure.Full})
	if err != nil {
		return nil, err
	}
	cx := m.Contexts()
	sid := map[structure.Structure]int{}
	var structs []structure.Structure
	var holders [][]int32 // examples holding each structure
	exStructs := make([][]int32, len(trees))
	for i, t := range trees {
		for _, s := range m.Structures(m.Graph(t)) {
			k, ok := sid[s]
			if !ok {
				k = len(structs)
				sid[s] = k
				structs = append(structs, s)
				holders = append(holders, nil)
			}
			holders[k] = append(holders[k], int32(i))
			exStructs[i] = append(exStructs[i], int32(k))
		}
	}
	holes := map[structure.Structure][]int32{}
	for k, s := range structs {
		for i := range s.Len() {
			h := s
			h.Sym[i] = -2
			holes[h] = append(holes[h], int32(k))
		}
	}
	best := make([]float64, len(structs))
	inSel := make([]bool, len(structs))
	remaining := make([]int, len(structs))
	for k := range structs {
		remaining[k] = len(holders[k])
	}
	chosen := make([]bool, len(trees))
	var out []int
	var tied []int
	for len(out) < cfg.Budget {
		lo := 2.0
		tied = tied[:0]
		for k := range structs {
			if remaining[k] == 0 {
				continue
			}
			switch {
			case best[k] < lo:
				lo = best[k]
				tied = append(tied[:0], k)
			case best[k] == lo:
				tied = append(tied, k)
			}
		}
		var ex int
		if len(tied) == 0 { // examples without structures remain
			for i := range trees {
				if !chosen[i] {
					ex = i
					break
				}
			}
		} else {
			k := tied[rng.IntN(len(tied))]
			var cand []int
			for _, i := range holders[k] {
				if !chosen[i] {
					cand = append(cand, int(i))
				}
			}
			ex = cand[rng.IntN(len(cand))]
		}
		chosen[ex] = true
		out = append(out, ex)
		for _, k := range exStructs[ex] {
			remaining[k]--
			if inSel[k] {
				continue
			}
			inSel[k], best[k] = true, 1
			s := structs[k]
			for i := range s.Len() {
				h := s
				h.Sym[i] = -2
				for _, o := range holes[h] {
					best[o] = max(best[o], cx.Sim(s.Sym[i], structs[o].Sym[i]))
				}
			}
		}
	}
	return out, nil
}
