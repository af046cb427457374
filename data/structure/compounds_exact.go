package structure

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// exactWeigher weighs occurrences by Keysers et al.'s definition over every
// enumerated supergraph: the supergraphs of an occurrence g are the
// compounds of all strict supersets of g of up to MaxSize nodes in the same
// tree. Listing them costs a multiple of the subtrees, so Build uses it only
// where trees hold few subtrees (see Supergraphs).
type exactWeigher struct {
	k      int
	ids    map[string]int32
	names  []string
	occ    []int
	sup    map[uint64]int // (G, G') -> occurrences of G inside some G'
	ranked [][]supCount
	sc     exactScratch
}

func newExactWeigher(k int) *exactWeigher {
	return &exactWeigher{k: k, ids: map[string]int32{}, sup: map[uint64]int{}}
}

func (x *exactWeigher) count(f *flat, atoms []string) {
	occs := x.sc.occurrences(f, x.k, atoms, x.ids, &x.names)
	for len(x.occ) < len(x.names) {
		x.occ = append(x.occ, 0)
	}
	for j := range occs {
		x.occ[occs[j].comp]++
		for _, g := range occs[j].supers {
			x.sup[pairKey(occs[j].comp, g)]++
		}
	}
}

func (x *exactWeigher) compounds() []string { return x.names }

func (x *exactWeigher) finish() {
	x.ranked = rankSupers(x.sup, len(x.occ))
	x.sup = nil
}

func (x *exactWeigher) fork() weigher {
	return &exactWeigher{k: x.k, ids: x.ids, names: x.names, occ: x.occ, ranked: x.ranked}
}

func (x *exactWeigher) weigh(f *flat, atoms []string, w *occWeights) {
	occs := x.sc.occurrences(f, x.k, atoms, x.ids, &x.names)
	sc := &x.sc
	for _, o := range occs {
		// The most frequent supergraph of G present around this
		// occurrence: the first of G's ranked supergraphs among o.supers.
		sc.stamp++
		for _, g := range o.supers {
			sc.seen[g] = sc.stamp
		}
		best := 0.0
		for _, r := range x.ranked[o.comp] {
			if sc.seen[r.sup] == sc.stamp {
				best = float64(r.n) / float64(x.occ[o.comp])
				break
			}
		}
		w.max(o.comp, 1-best)
	}
}

// supCount is how many occurrences of a compound lie inside some occurrence
// of the supergraph sup.
type supCount struct {
	sup int32
	n   int32
}

// rankSupers lists each compound's supergraphs, most co-occurring first.
func rankSupers(sup map[uint64]int, n int) [][]supCount {
	ranked := make([][]supCount, n)
	for k, c := range sup {
		g := int32(k >> 32)
		ranked[g] = append(ranked[g], supCount{sup: int32(uint32(k)), n: int32(c)})
	}
	for _, r := range ranked {
		slices.SortFunc(r, func(a, b supCount) int {
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			return cmp.Compare(a.sup, b.sup)
		})
	}
	return ranked
}

// exactScratch holds buffers reused across trees.
type exactScratch struct {
	text  strings.Builder
	key   []byte
	byTop [][]int32
	seen  []uint64 // compound id -> the stamp of the last occurrence listing it
	stamp uint64
}

// occurrences enumerates the subtrees of f, names each as a compound
// (adding new compounds to ids and names) and lists, for each, the distinct
// compounds of the strict supersets among them. A superset's top node is
// the top node of the subset or one of its ancestors, so only occurrences
// rooted there are compared.
func (sc *exactScratch) occurrences(f *flat, k int, atoms []string, ids map[string]int32, names *[]string) []occurrence {
	occs := enumerate(f, k)
	words := (len(f.atom) + 63) / 64
	bits := make([]uint64, words*len(occs))
	if cap(sc.byTop) < len(f.atom) {
		sc.byTop = make([][]int32, len(f.atom))
	}
	byTop := sc.byTop[:len(f.atom)]
	for i := range byTop {
		byTop[i] = byTop[i][:0]
	}
	for j := range occs {
		b := bits[j*words : (j+1)*words]
		for _, n := range occs[j].nodes {
			b[n/64] |= 1 << (n % 64)
		}
		top := occs[j].nodes[0] // pre-order: the top node has the smallest index
		sc.key = compoundKey(sc.key[:0], f, b, top)
		id, ok := ids[string(sc.key)]
		if !ok {
			id = int32(len(*names))
			ids[string(sc.key)] = id
			sc.text.Reset()
			compoundText(&sc.text, f, occs[j].nodes, atoms)
			*names = append(*names, sc.text.String())
		}
		occs[j].comp = id
		byTop[top] = append(byTop[top], int32(j))
	}
	for len(sc.seen) < len(*names) {
		sc.seen = append(sc.seen, 0)
	}
	for j := range occs {
		sc.stamp++
		sub := bits[j*words : (j+1)*words]
		size := len(occs[j].nodes)
		for a, depth := occs[j].nodes[0], 0; a >= 0 && depth <= k-size; a, depth = f.parent[a], depth+1 {
			for _, o := range byTop[a] {
				if len(occs[o].nodes) <= size {
					continue
				}
				sup := bits[int(o)*words : (int(o)+1)*words]
				in := true
				for w := range sub {
					if sub[w]&^sup[w] != 0 {
						in = false
						break
					}
				}
				if c := occs[o].comp; in && sc.seen[c] != sc.stamp {
					sc.seen[c] = sc.stamp
					occs[j].supers = append(occs[j].supers, c)
				}
			}
		}
	}
	return occs
}

// occurrence is one subtree of one tree.
type occurrence struct {
	nodes  []int32 // sorted pre-order node indices
	comp   int32   // compound id
	supers []int32 // distinct compound ids of strict supersets within the tree
}

// enumerate lists every subtree of 2..k nodes once: from each top node it
// grows the set by frontier nodes in a fixed order, never revisiting a
// frontier node it chose to skip, which yields each set exactly once.
func enumerate(f *flat, k int) []occurrence {
	var out []occurrence
	set := make([]int32, 0, k)
	var grow func(frontier []int32)
	grow = func(frontier []int32) {
		if len(set) >= 2 {
			nodes := append([]int32(nil), set...)
			sortInt32(nodes)
			out = append(out, occurrence{nodes: nodes})
		}
		if len(set) == k {
			return
		}
		for i, u := range frontier {
			next := make([]int32, 0, len(frontier)-i-1+len(f.children[u]))
			next = append(next, frontier[i+1:]...)
			next = append(next, f.children[u]...)
			set = append(set, u)
			grow(next)
			set = set[:len(set)-1]
		}
	}
	for v := range f.atom {
		set = append(set[:0], int32(v))
		grow(append([]int32(nil), f.children[v]...))
	}
	return out
}

// compoundKey appends a binary form of the subtree in set rooted at n that
// identifies the compound as compoundText does, but costs no allocation:
// atom id, then 0 for a node with no chosen children (whatever its arity,
// as in the text) or the slot count + 1 and per slot whether the child is in
// the compound.
func compoundKey(b []byte, f *flat, set []uint64, n int32) []byte {
	b = binary.AppendUvarint(b, uint64(f.atom[n]))
	open := false
	for _, c := range f.children[n] {
		if set[c/64]&(1<<(c%64)) != 0 {
			open = true
			break
		}
	}
	if !open {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(f.children[n]))+1)
	for _, c := range f.children[n] {
		if set[c/64]&(1<<(c%64)) == 0 {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = compoundKey(b, f, set, c)
	}
	return b
}

// compoundText writes a subtree canonically: a node with no chosen children
// is its label; a node with chosen children is label(slot, ...) listing all
// of its argument slots, "_" for a child outside the compound, so argument
// position is part of the compound (TMCD writes FunQL compounds the same
// way, e.g. most( __ , loc_1 , __ )).
func compoundText(b *strings.Builder, f *flat, nodes []int32, atoms []string) {
	in := func(n int32) bool {
		for _, x := range nodes {
			if x == n {
				return true
			}
		}
		return false
	}
	var w func(n int32)
	w = func(n int32) {
		b.WriteString(quoteLabel(atoms[f.atom[n]]))
		open := false
		for _, c := range f.children[n] {
			if in(c) {
				open = true
				break
			}
		}
		if !open {
			return
		}
		b.WriteByte('(')
		for i, c := range f.children[n] {
			if i > 0 {
				b.WriteString(", ")
			}
			if in(c) {
				w(c)
			} else {
				b.WriteByte('_')
			}
		}
		b.WriteByte(')')
	}
	top := nodes[0] // pre-order: the top node has the smallest index
	w(top)
}
