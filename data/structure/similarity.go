package structure

// Symbol and structure similarity of Bogin et al. §4.2: a symbol's contexts
// are the sets of symbols seen as its parents, children, left siblings and
// right siblings in the training programs. Two symbols' similarity averages
// the Jaccard similarities of their context sets in two steps, as the
// authors' public implementation (easiness/, the token-similarity code)
// does; the paper's text does not fix the order:
//
//   1. within each relation type (parent-child: the parents and children
//      sets; consecutive siblings: the left and right sets), the mean of the
//      two directions' Jaccard similarities, leaving out a direction in which
//      both symbols' sets are empty;
//   2. the mean over the relation types that kept at least one direction.
//
// A flat mean over the four sets weighs a relation type by how many of its
// directions are non-empty, and differs from this on about 3% of COVR test
// programs. The contexts come from the parent-child and sibling pairs only
// (the reference builds them from the 2-node structures whatever n is), so
// they are the same for n = 2, 3 and 4; an ablation that drops an edge kind
// drops its relation type (NOPC keeps siblings, NOSIB keeps parent-child).
// The n-gram baseline has one relation type, previous/next symbol.

import (
	"slices"
)

// Context is one context type of §4.2: one direction of one relation type.
type Context uint8

// The four context types; the n-gram baseline uses only Left and Right
// (previous and next symbol in the sequence).
const (
	Parents Context = iota
	Children
	Left
	Right
	numContexts
)

// relation is the relation type a context direction belongs to: parents
// and children are the two directions of parent-child, left and right the
// two directions of consecutive siblings (or of sequence neighbours).
func (c Context) relation() int {
	if c == Parents || c == Children {
		return 0
	}
	return 1
}

// Contexts holds every training symbol's context sets, as sorted id lists.
type Contexts struct {
	// set[c][m] is ctx_c(m), sorted ascending, no repeats.
	set [numContexts][][]int32
	// use lists the context types that count (ablations drop some).
	use []Context
	// dense[a*n+b] caches the similarity of training symbols a, b < n.
	dense []float32
	n     int
}

// denseLimit bounds the symbol count whose pairwise similarities are all
// precomputed (4096² float32 = 64 MiB); above it they are computed on use.
const denseLimit = 4096

// ContextBuilder accumulates contexts from training programs.
type ContextBuilder struct {
	sets [numContexts][]map[int32]struct{}
}

func (b *ContextBuilder) add(c Context, m, x int32) {
	for int(m) >= len(b.sets[c]) {
		b.sets[c] = append(b.sets[c], nil)
	}
	if b.sets[c][m] == nil {
		b.sets[c][m] = map[int32]struct{}{}
	}
	b.sets[c][m][x] = struct{}{}
}

// AddGraph records the contexts of every node of g.
func (b *ContextBuilder) AddGraph(g *Graph) {
	for v, ch := range g.Children {
		p := g.Label[v]
		for i, c := range ch {
			b.add(Parents, g.Label[c], p)
			b.add(Children, p, g.Label[c])
			if i > 0 {
				b.add(Left, g.Label[c], g.Label[ch[i-1]])
			}
			if i+1 < len(ch) {
				b.add(Right, g.Label[c], g.Label[ch[i+1]])
			}
		}
	}
}

// AddSequence records left/right neighbours in a flat symbol sequence
// (the n-gram baseline, §4.4).
func (b *ContextBuilder) AddSequence(seq []int32) {
	for i, m := range seq {
		if i > 0 {
			b.add(Left, m, seq[i-1])
		}
		if i+1 < len(seq) {
			b.add(Right, m, seq[i+1])
		}
	}
}

// Build freezes the contexts for nsym symbols, counting only the context
// types in use, and precomputes pairwise similarities when nsym is small.
func (b *ContextBuilder) Build(nsym int, use []Context) *Contexts {
	cx := &Contexts{use: use, n: nsym}
	for c := range numContexts {
		cx.set[c] = make([][]int32, nsym)
		for m, s := range b.sets[c] {
			if m >= nsym || len(s) == 0 {
				continue
			}
			l := make([]int32, 0, len(s))
			for x := range s {
				l = append(l, x)
			}
			slices.Sort(l)
			cx.set[c][m] = l
		}
	}
	if nsym <= denseLimit {
		cx.dense = make([]float32, nsym*nsym)
		for a := range nsym {
			cx.dense[a*nsym+a] = 1
			for bb := a + 1; bb < nsym; bb++ {
				s := float32(cx.compute(int32(a), int32(bb)))
				cx.dense[a*nsym+bb] = s
				cx.dense[bb*nsym+a] = s
			}
		}
	}
	return cx
}

// Set returns ctx_c(m) (nil when m has none or is not a training symbol).
func (cx *Contexts) Set(c Context, m int32) []int32 {
	if int(m) >= cx.n || m < 0 {
		return nil
	}
	return cx.set[c][m]
}

// Sim is the symbol similarity of §4.2: 1 for the same symbol; otherwise
// the mean over relation types of the mean over that type's directions of
// the Jaccard similarity, counting only directions in use that are
// non-empty for a or b and types with at least one such direction; 0 when
// there is none (e.g. a symbol never seen in training).
func (cx *Contexts) Sim(a, b int32) float64 {
	if a == b {
		return 1
	}
	if int(a) >= cx.n || int(b) >= cx.n || a < 0 || b < 0 {
		return 0
	}
	if cx.dense != nil {
		return float64(cx.dense[int(a)*cx.n+int(b)])
	}
	return cx.compute(a, b)
}

func (cx *Contexts) compute(a, b int32) float64 {
	var sum [2]float64 // per relation type: sum of direction similarities
	var dirs [2]int    // per relation type: directions counted
	for _, c := range cx.use {
		A, B := cx.set[c][a], cx.set[c][b]
		if len(A) == 0 && len(B) == 0 {
			continue
		}
		r := c.relation()
		sum[r] += jaccard(A, B)
		dirs[r]++
	}
	total, types := 0.0, 0
	for r := range sum {
		if dirs[r] > 0 {
			total += sum[r] / float64(dirs[r])
			types++
		}
	}
	if types == 0 {
		return 0
	}
	return total / float64(types)
}

// jaccard is |A∩B| / |A∪B| for sorted, repeat-free lists, not both empty.
func jaccard(A, B []int32) float64 {
	i, j, inter := 0, 0, 0
	for i < len(A) && j < len(B) {
		switch {
		case A[i] == B[j]:
			inter++
			i++
			j++
		case A[i] < B[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(A)+len(B)-inter)
}

// StructureSim is the structure similarity of §4.2: 1 if a and b are
// identical; the symbol similarity of the differing pair if they have the
// same shape and differ in exactly one node; 0 otherwise.
func (cx *Contexts) StructureSim(a, b Structure) float64 {
	if a.Shape != b.Shape {
		return 0
	}
	diff := -1
	for i := range a.Sym {
		if a.Sym[i] != b.Sym[i] {
			if diff >= 0 || a.Sym[i] == none || b.Sym[i] == none {
				return 0
			}
			diff = i
		}
	}
	if diff < 0 {
		return 1
	}
	return cx.Sim(a.Sym[diff], b.Sym[diff])
}
