package structure

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"compgen/data"
	"compgen/progress"
)

// CompoundConfig says which subgraphs of a tree count as compounds.
type CompoundConfig struct {
	// MaxSize is the largest compound in nodes (Keysers et al. use "a large
	// subset of subgraphs"; compgen takes every subtree up to this size).
	MaxSize int
}

// DefaultCompoundConfig is every subtree of up to 3 nodes.
func DefaultCompoundConfig() CompoundConfig { return CompoundConfig{MaxSize: 3} }

// Validate checks the configuration.
func (c CompoundConfig) Validate() error {
	if c.MaxSize < 2 || c.MaxSize > 8 {
		return fmt.Errorf("compound size %d: want 2 to 8 nodes", c.MaxSize)
	}
	return nil
}

// Entry is one atom or compound of an example: its id in the Index and its
// value there (atoms: occurrences; compounds: the weight, see Build).
type Entry struct {
	ID int32
	W  float64
}

// Example is one tree's atoms and compounds, each sorted by ID.
type Example struct {
	// Atoms counts each node label (the frequency of the atom).
	Atoms []Entry
	// Compounds holds each compound occurring in the tree with its weight.
	Compounds []Entry
}

// Index holds the atoms and compounds of a pool of trees, with integer ids
// so splits can work on sparse vectors.
type Index struct {
	// Atoms maps atom id to its label.
	Atoms []string
	// Compounds maps compound id to its canonical text (see compoundText).
	Compounds []string
	// Examples are the pool's trees, in input order.
	Examples []Example
}

// flat is a tree laid out in pre-order arrays.
type flat struct {
	atom     []int32   // atom id of node i
	parent   []int32   // parent of node i, -1 for the root
	children [][]int32 // children of node i in order
}

// Build indexes trees: atoms are node labels; compounds are the subtrees of
// 2..MaxSize nodes. A subtree is a set of nodes that contains, for each node
// but its top one, that node's parent (a connected subgraph of the rooted
// tree). Single nodes are atoms, not compounds.
//
// Weights follow Keysers et al. §2.1 and App. L.4: an occurrence g of
// compound G weighs 1 - max over strict supergraphs G' of P(G' | G), where
// P(G' | G) is the fraction of G's occurrences in the whole pool that lie
// inside some occurrence of G'; the weight of G in a tree is the largest
// weight of its occurrences there. Supergraphs range over the enumerated
// compounds, so compounds of exactly MaxSize nodes always weigh 1.
func Build(trees []*data.Tree, cfg CompoundConfig, stderr io.Writer) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ix := &Index{Examples: make([]Example, len(trees))}
	atomID := map[string]int32{}
	compID := map[string]int32{}
	flats := make([]flat, len(trees))
	for i, t := range trees {
		if t == nil {
			return nil, fmt.Errorf("example %d has no tree", i)
		}
		flats[i] = flatten(t, atomID, &ix.Atoms)
	}
	occ := []int{}          // compound id -> occurrences in the pool
	sup := map[uint64]int{} // (G, G') -> occurrences of G inside some G'
	perTree := make([][]occurrence, len(trees))
	bar := progress.New(stderr, "compounds", int64(2*len(trees)))
	var buf strings.Builder
	for i := range flats {
		occs := enumerate(&flats[i], cfg.MaxSize)
		for j := range occs {
			buf.Reset()
			compoundText(&buf, &flats[i], occs[j].nodes, ix.Atoms)
			s := buf.String()
			id, ok := compID[s]
			if !ok {
				id = int32(len(ix.Compounds))
				compID[s] = id
				ix.Compounds = append(ix.Compounds, s)
				occ = append(occ, 0)
			}
			occs[j].comp = id
			occ[id]++
		}
		linkSupersets(&flats[i], occs)
		for j := range occs {
			for _, g := range occs[j].supers {
				sup[pairKey(occs[j].comp, g)]++
			}
		}
		perTree[i] = occs
		ix.Examples[i].Atoms = atomCounts(flats[i].atom)
		bar.Add(1)
	}
	for i, occs := range perTree {
		w := map[int32]float64{}
		for _, o := range occs {
			best := 0.0
			for _, g := range o.supers {
				if p := float64(sup[pairKey(o.comp, g)]) / float64(occ[o.comp]); p > best {
					best = p
				}
			}
			if cur, ok := w[o.comp]; !ok || 1-best > cur {
				w[o.comp] = 1 - best
			}
		}
		ix.Examples[i].Compounds = sortedEntries(w)
		perTree[i] = nil
		bar.Add(1)
	}
	bar.Finish()
	return ix, nil
}

// occurrence is one subtree of one tree.
type occurrence struct {
	nodes  []int32 // sorted pre-order node indices
	comp   int32   // compound id
	supers []int32 // distinct compound ids of strict supersets within the tree
}

func pairKey(g, sup int32) uint64 { return uint64(uint32(g))<<32 | uint64(uint32(sup)) }

func flatten(t *data.Tree, atomID map[string]int32, atoms *[]string) flat {
	var f flat
	var walk func(t *data.Tree, parent int32)
	walk = func(t *data.Tree, parent int32) {
		i := int32(len(f.atom))
		id, ok := atomID[t.Label]
		if !ok {
			id = int32(len(*atoms))
			atomID[t.Label] = id
			*atoms = append(*atoms, t.Label)
		}
		f.atom = append(f.atom, id)
		f.parent = append(f.parent, parent)
		f.children = append(f.children, nil)
		if parent >= 0 {
			f.children[parent] = append(f.children[parent], i)
		}
		for _, c := range t.Children {
			walk(c, i)
		}
	}
	walk(t, -1)
	return f
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

// linkSupersets fills each occurrence's supers: for every occurrence, each
// proper subset of its nodes that is itself a subtree of >= 2 nodes gets the
// occurrence's compound as a strict supergraph.
func linkSupersets(f *flat, occs []occurrence) {
	byKey := make(map[string]int, len(occs))
	for i := range occs {
		byKey[nodeKey(occs[i].nodes)] = i
	}
	sub := make([]int32, 0, 8)
	for i := range occs {
		n := occs[i].nodes
		for mask := 1; mask < 1<<len(n)-1; mask++ {
			sub = sub[:0]
			for b := range n {
				if mask&(1<<b) != 0 {
					sub = append(sub, n[b])
				}
			}
			if len(sub) < 2 {
				continue
			}
			j, ok := byKey[nodeKey(sub)]
			if !ok {
				continue // not connected
			}
			addUnique(&occs[j].supers, occs[i].comp)
		}
	}
}

func addUnique(s *[]int32, v int32) {
	for _, x := range *s {
		if x == v {
			return
		}
	}
	*s = append(*s, v)
}

func nodeKey(nodes []int32) string {
	b := make([]byte, 0, 4*len(nodes))
	for _, n := range nodes {
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
	}
	return string(b)
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

// quoteLabel quotes a label that could be confused with compound syntax.
func quoteLabel(s string) string {
	if s == "" || s == "_" || strings.ContainsAny(s, "(), \"\\\t\n") {
		return strconv.Quote(s)
	}
	return s
}

func atomCounts(atoms []int32) []Entry {
	m := map[int32]float64{}
	for _, a := range atoms {
		m[a]++
	}
	return sortedEntries(m)
}

func sortedEntries(m map[int32]float64) []Entry {
	out := make([]Entry, 0, len(m))
	for id, w := range m {
		out = append(out, Entry{ID: id, W: w})
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// sortInt32 sorts a handful of node indices (at most MaxSize).
func sortInt32(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
