package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// gpt2Exec runs a forward-only graph node by node, writing each node into
// the buffer it got on the first run. gorgonia's tape machine drops its
// registers on Reset and allocates every intermediate afresh on each run;
// for the block-at-a-time scoring pass that is one block's activations of
// garbage per layer (about 50 MB for GPT-2 medium at 32 x 16 tokens), which
// let the heap grow to twice the weights before a collection. The ops run
// are the graph's own, so the numbers are the same.
type gpt2Exec struct {
	order []*G.Node // children before parents
	args  [][]int   // positions in order of each node's children
	vals  []G.Value // last output of each node
	// fresh marks nodes whose output may alias an input (a view); they are
	// recomputed with Do every run instead of written in place.
	fresh []bool
	pos   map[*G.Node]int
}

func newGPT2Exec(outputs ...*G.Node) (*gpt2Exec, error) {
	e := &gpt2Exec{pos: map[*G.Node]int{}}
	var visit func(n *G.Node) error
	visit = func(n *G.Node) error {
		if _, ok := e.pos[n]; ok {
			return nil
		}
		var kids []int
		it := n.Graph().From(n.ID())
		for it.Next() {
			c, ok := it.Node().(*G.Node)
			if !ok {
				return fmt.Errorf("node %v has a child of type %T", n, it.Node())
			}
			if err := visit(c); err != nil {
				return err
			}
			kids = append(kids, e.pos[c])
		}
		e.pos[n] = len(e.order)
		e.order = append(e.order, n)
		e.args = append(e.args, kids)
		return nil
	}
	for _, o := range outputs {
		if err := visit(o); err != nil {
			return nil, err
		}
	}
	e.vals = make([]G.Value, len(e.order))
	e.fresh = make([]bool, len(e.order))
	return e, nil
}

// run computes every node; inputs gives the values of input nodes (others
// keep the value bound at construction).
func (e *gpt2Exec) run(inputs map[*G.Node]G.Value) error {
	for i, n := range e.order {
		op := n.Op()
		if op == nil {
			v, ok := inputs[n]
			if !ok {
				v = n.Value()
			}
			if v == nil {
				return fmt.Errorf("input %s has no value", n.Name())
			}
			e.vals[i] = v
			continue
		}
		ins := make([]G.Value, len(e.args[i]))
		for k, j := range e.args[i] {
			ins[k] = e.vals[j]
		}
		var v G.Value
		var err error
		pd, canReuse := op.(G.UsePreallocDoer)
		if canReuse && e.vals[i] != nil && !e.fresh[i] {
			v, err = pd.UsePreallocDo(e.vals[i], ins...)
		} else {
			v, err = op.Do(ins...)
			if err == nil && e.vals[i] == nil {
				e.fresh[i] = aliases(v, ins)
			}
		}
		if err != nil {
			return fmt.Errorf("%v: %w", op, err)
		}
		e.vals[i] = v
	}
	return nil
}

// value returns the last output of n, which must be in the graph run.
func (e *gpt2Exec) value(n *G.Node) G.Value { return e.vals[e.pos[n]] }

// aliases reports whether v's memory overlaps any input's.
func aliases(v G.Value, ins []G.Value) bool {
	a, an := v.Uintptr(), uintptr(v.MemSize())
	for _, in := range ins {
		b, bn := in.Uintptr(), uintptr(in.MemSize())
		if an > 0 && bn > 0 && a < b+bn && b < a+an {
			return true
		}
	}
	return false
}
