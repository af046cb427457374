package engine

import "sort"

// alignElems aligns every arena buffer to 64 elements (256 bytes), the
// alignment GPU loads and tensor-core tiles want.
const alignElems = 64

func align(n int) int { return (n + alignElems - 1) / alignElems * alignElems }

// Interval is one arena request: Size elements live from step Def to step
// LastUse inclusive.
type Interval struct{ Def, LastUse, Size int }

// plan computes each activation's live range and places it in the arena.
func plan(p *Program) {
	for i := range p.Bufs {
		if p.Bufs[i].Class == Activation {
			p.Bufs[i].Def, p.Bufs[i].LastUse = -1, -1
		}
	}
	for s, st := range p.Steps {
		for _, id := range st.In {
			if p.Bufs[id].Class == Activation {
				p.Bufs[id].LastUse = max(p.Bufs[id].LastUse, s)
			}
		}
		for _, id := range []int{st.Out, st.Aux} {
			if id >= 0 && p.Bufs[id].Class == Activation && p.Bufs[id].Def < 0 {
				p.Bufs[id].Def = s
			}
		}
	}
	var ids []int
	var iv []Interval
	for i := range p.Bufs {
		b := &p.Bufs[i]
		if b.Class != Activation {
			b.Offset = -1
			continue
		}
		b.LastUse = max(b.LastUse, b.Def)
		ids = append(ids, i)
		iv = append(iv, Interval{b.Def, b.LastUse, b.Size})
	}
	offs, size := Place(iv)
	for k, id := range ids {
		p.Bufs[id].Offset = offs[k]
	}
	p.ArenaSize = size
}

// Place assigns arena offsets to intervals by a first-fit sweep over the
// steps: at each step the buffers defined there take the lowest free range
// that fits, then the buffers whose last use it is are freed. A buffer
// defined at step s therefore never shares memory with one read at s. It
// returns the offsets and the arena size, both in elements.
func Place(iv []Interval) ([]int, int) {
	order := make([]int, len(iv))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return iv[order[a]].Def < iv[order[b]].Def })
	byEnd := append([]int(nil), order...)
	sort.SliceStable(byEnd, func(a, b int) bool { return iv[byEnd[a]].LastUse < iv[byEnd[b]].LastUse })
	offs := make([]int, len(iv))
	var free []hole // sorted by offset, coalesced
	top := 0
	e := 0
	for k := 0; k < len(order); {
		step := iv[order[k]].Def
		// Free everything whose last use came before this step.
		for e < len(byEnd) && iv[byEnd[e]].LastUse < step {
			i := byEnd[e]
			free = release(free, hole{offs[i], align(iv[i].Size)})
			e++
		}
		for ; k < len(order) && iv[order[k]].Def == step; k++ {
			i := order[k]
			need := align(iv[i].Size)
			got := -1
			for h := range free {
				if free[h].size >= need {
					got = free[h].off
					free[h].off += need
					free[h].size -= need
					if free[h].size == 0 {
						free = append(free[:h], free[h+1:]...)
					}
					break
				}
			}
			if got < 0 {
				// Grow the arena, absorbing a free hole that ends at top.
				if n := len(free); n > 0 && free[n-1].off+free[n-1].size == top {
					got = free[n-1].off
					top = got + need
					free = free[:n-1]
				} else {
					got = top
					top += need
				}
			}
			offs[i] = got
		}
	}
	return offs, top
}

type hole struct{ off, size int }

func release(free []hole, h hole) []hole {
	i := sort.Search(len(free), func(k int) bool { return free[k].off > h.off })
	free = append(free, hole{})
	copy(free[i+1:], free[i:])
	free[i] = h
	// Coalesce with the neighbours.
	if i+1 < len(free) && free[i].off+free[i].size == free[i+1].off {
		free[i].size += free[i+1].size
		free = append(free[:i+1], free[i+2:]...)
	}
	if i > 0 && free[i-1].off+free[i-1].size == free[i].off {
		free[i-1].size += free[i].size
		free = append(free[:i], free[i+1:]...)
	}
	return free
}
