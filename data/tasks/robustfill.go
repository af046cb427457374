package tasks

import (
	"fmt"
	"math/rand/v2"

	"compbench/data"
	"compbench/data/robustfill"
)

// RobustFill tasks (paper §2 and App. B). A program part is one expression.
// Concepts are the substring operations versus the modifications plus
// ConstStr (Compose omitted). Lengths are 2-6 parts unless the task says
// otherwise.

// rfSampler draws RobustFill examples of one task.
type rfSampler struct {
	task Task
	s    *robustfill.Sampler
}

// NewRobustFill returns the sampler of a RobustFill task with the paper's
// settings (4 I/O examples, inputs up to 20 characters).
func NewRobustFill(task Task) (Sampler, error) {
	if _, err := Parse(string(task)); err != nil {
		return nil, err
	}
	s, err := robustfill.NewSampler(robustfill.DefaultConfig())
	if err != nil {
		return nil, err
	}
	return &rfSampler{task: task, s: s}, nil
}

// Sample draws one record of distribution d; i places compose-new-operation's
// single-Compose training programs at every fourth training index.
func (r *rfSampler) Sample(rng *rand.Rand, d Dist, i int) (data.Record, error) {
	spec := rfSpec(r.task, rng, d, i)
	t, err := r.s.Sample(rng, spec)
	if err != nil {
		return data.Record{}, fmt.Errorf("robustfill %s: %w", r.task, err)
	}
	return t.Record(), nil
}

// rfBetween draws a length in lo..hi.
func rfBetween(rng *rand.Rand, lo, hi int) int { return lo + rng.IntN(hi-lo+1) }

func rfPools(n int, p robustfill.Pool) []robustfill.Pool {
	ps := make([]robustfill.Pool, n)
	for j := range ps {
		ps[j] = p
	}
	return ps
}

// rfSpec is the program shape of one example.
func rfSpec(task Task, rng *rand.Rand, d Dist, i int) robustfill.Spec {
	train := d == Train
	switch task {
	case Length:
		if train {
			return robustfill.Spec{Pools: rfPools(rfBetween(rng, 1, 6), robustfill.PoolAll)}
		}
		return robustfill.Spec{Pools: rfPools(rfBetween(rng, 7, 10), robustfill.PoolAll)}
	case LengthHard:
		if train {
			return robustfill.Spec{Pools: rfPools(6, robustfill.PoolAll)}
		}
		n := rfBetween(rng, 1, 9) // 1-10 except 6
		if n >= 6 {
			n++
		}
		return robustfill.Spec{Pools: rfPools(n, robustfill.PoolAll)}
	case LengthHardest:
		if train {
			return robustfill.Spec{Pools: rfPools(1, robustfill.PoolAll)}
		}
		return robustfill.Spec{Pools: rfPools(rfBetween(rng, 2, 6), robustfill.PoolAll)}
	case ComposeDifferentConcepts:
		n := rfBetween(rng, 2, 6)
		if train {
			// One concept for the whole program, chosen per example.
			if rng.IntN(2) == 0 {
				return robustfill.Spec{Pools: rfPools(n, robustfill.PoolSubstring)}
			}
			return robustfill.Spec{Pools: rfPools(n, robustfill.PoolModOrConst)}
		}
		return robustfill.Spec{Pools: rfPools(n, robustfill.PoolConcepts), Keep: mixesConcepts}
	case SwitchConceptOrder:
		// Train: the first floor(n/2) parts substring, the rest
		// modification or ConstStr; test: the reverse.
		n := rfBetween(rng, 2, 6)
		first, second := robustfill.PoolSubstring, robustfill.PoolModOrConst
		if !train {
			first, second = second, first
		}
		ps := rfPools(n, second)
		for j := range n / 2 {
			ps[j] = first
		}
		return robustfill.Spec{Pools: ps}
	case ComposeNewOperation:
		if train {
			if i%4 == 0 { // exactly a quarter: one Compose alone
				return robustfill.Spec{Pools: rfPools(1, robustfill.PoolCompose)}
			}
			return robustfill.Spec{Pools: rfPools(rfBetween(rng, 2, 6), robustfill.PoolNoCompose)}
		}
		return robustfill.Spec{Pools: rfPools(rfBetween(rng, 2, 6), robustfill.PoolAll), Keep: hasCompose}
	case AddOperationFunctionality:
		n := rfBetween(rng, 1, 6)
		if train {
			return robustfill.Spec{Pools: rfPools(n, robustfill.PoolNoComposeSubstring)}
		}
		return robustfill.Spec{Pools: rfPools(n, robustfill.PoolAll), Keep: hasComposeSubstring}
	}
	// None: one distribution of 1-10 parts.
	return robustfill.Spec{Pools: rfPools(rfBetween(rng, 1, 10), robustfill.PoolAll)}
}

func hasCompose(p robustfill.Program) bool {
	for _, e := range p {
		if e.Op == robustfill.Compose {
			return true
		}
	}
	return false
}

func hasComposeSubstring(p robustfill.Program) bool {
	for _, e := range p {
		if e.Op == robustfill.Compose && e.Arg.Op.IsSubstring() {
			return true
		}
	}
	return false
}

// mixesConcepts reports whether p has a substring part and a modification
// or ConstStr part.
func mixesConcepts(p robustfill.Program) bool {
	sub, other := false, false
	for _, e := range p {
		if e.Op.IsSubstring() {
			sub = true
		} else {
			other = true
		}
	}
	return sub && other
}
