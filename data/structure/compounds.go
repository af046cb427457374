package structure

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/progress"
)

// CompoundConfig says which subgraphs of a tree count as compounds.
type CompoundConfig struct {
	// MaxSize is the largest compound in nodes (Keysers et al. use "a large
	// subset of subgraphs"; compbench takes every subtree up to this size); 0
	// picks it from the data (AutoMaxSize).
	MaxSize int
	// Keep, when positive, keeps only the Keep compounds with the largest
	// weight summed over the pool (Keysers et al. §2.1); 0 keeps them all.
	Keep int
}

// DefaultCompoundConfig chooses the size from the data (MaxSize 0, see
// AutoMaxSize).
func DefaultCompoundConfig() CompoundConfig { return CompoundConfig{} }

// Auto size limits: the largest compound size AutoMaxSize picks, and the
// subtrees per tree, on average over the pool, it allows.
const (
	AutoSizeCap  = 12
	AutoPerTree  = 96
	autoSizeLow  = 3
	subtreeCount = AutoSizeCap + 1
)

// AutoMaxSize is the compound size MaxSize 0 stands for: the largest size up
// to AutoSizeCap for which the trees hold at most AutoPerTree subtrees of
// 2..size nodes each on average, and at least 3. Keysers et al. (§2.1)
// weigh "a large subset of subgraphs" chosen for practicality; a fixed
// small size misses them on deep, chain-like trees (a SCAN phrase is a chain
// of 6 rule applications, a whole command up to 15), while bushy trees (CFQ)
// have too many large subtrees to enumerate.
func AutoMaxSize(trees []*data.Tree) int {
	var total [subtreeCount]float64 // subtrees of exactly s nodes
	var walk func(t *data.Tree) [subtreeCount]float64
	walk = func(t *data.Tree) [subtreeCount]float64 {
		var f [subtreeCount]float64 // subtrees topped by t, by size
		f[1] = 1
		for _, c := range t.Children {
			fc := walk(c)
			var g [subtreeCount]float64
			for a := 1; a < subtreeCount; a++ {
				if f[a] == 0 {
					continue
				}
				g[a] += f[a] // c left out
				for b := 1; a+b < subtreeCount; b++ {
					g[a+b] += f[a] * fc[b]
				}
			}
			f = g
		}
		for s := 2; s < subtreeCount; s++ {
			total[s] += f[s]
		}
		return f
	}
	for _, t := range trees {
		if t != nil {
			walk(t)
		}
	}
	best, sum := autoSizeLow, 0.0
	for s := 2; s < subtreeCount; s++ {
		sum += total[s]
		if s > autoSizeLow && sum <= AutoPerTree*float64(max(len(trees), 1)) {
			best = s
		}
	}
	return best
}

// MaxCompoundSize bounds MaxSize: the number of subtrees grows quickly with
// it on bushy trees.
const MaxCompoundSize = 16

// Validate checks the configuration.
func (c CompoundConfig) Validate() error {
	if c.MaxSize != 0 && (c.MaxSize < 2 || c.MaxSize > MaxCompoundSize) {
		return fmt.Errorf("compound size %d: want 2 to %d nodes", c.MaxSize, MaxCompoundSize)
	}
	if c.Keep < 0 {
		return fmt.Errorf("compounds kept %d: want >= 0", c.Keep)
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
	// MaxSize is the compound size used (AutoMaxSize's choice for 0).
	MaxSize int
	// Keep is how many compounds were kept by total weight (0: all).
	Keep int
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
// compounds, so compounds of exactly MaxSize nodes always weigh 1. When
// Keep is set, only the Keep compounds with the largest total weight over
// the pool remain ("keep only the ones with highest sum of weights", §2.1).
//
// Memory stays proportional to the pool and its distinct compounds: the
// occurrences of a tree are enumerated twice (once to count, once to weigh)
// rather than stored.
func Build(trees []*data.Tree, cfg CompoundConfig, stderr io.Writer) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for i, t := range trees {
		if t == nil {
			return nil, fmt.Errorf("example %d has no tree", i)
		}
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = AutoMaxSize(trees)
	}
	ix := &Index{MaxSize: cfg.MaxSize, Examples: make([]Example, len(trees))}
	atomID := map[string]int32{}
	compID := map[string]int32{}
	occ := []int{}          // compound id -> occurrences in the pool
	sup := map[uint64]int{} // (G, G') -> occurrences of G inside some G'
	bar := progress.New(stderr, "compounds", int64(2*len(trees)))
	var sc scratch
	for i, t := range trees {
		f := flatten(t, atomID, &ix.Atoms)
		occs := sc.occurrences(&f, cfg.MaxSize, ix.Atoms, compID, &ix.Compounds)
		for len(occ) < len(ix.Compounds) {
			occ = append(occ, 0)
		}
		for j := range occs {
			occ[occs[j].comp]++
			for _, g := range occs[j].supers {
				sup[pairKey(occs[j].comp, g)]++
			}
		}
		ix.Examples[i].Atoms = atomCounts(f.atom)
		bar.Add(1)
	}
	ranked := rankSupers(sup, len(occ))
	sup = nil
	w := map[int32]float64{}
	for i, t := range trees {
		f := flatten(t, atomID, &ix.Atoms)
		occs := sc.occurrences(&f, cfg.MaxSize, ix.Atoms, compID, &ix.Compounds)
		clear(w)
		for _, o := range occs {
			// The most frequent supergraph of G present around this
			// occurrence: the first of G's ranked supergraphs among o.supers.
			sc.stamp++
			for _, g := range o.supers {
				sc.seen[g] = sc.stamp
			}
			best := 0.0
			for _, r := range ranked[o.comp] {
				if sc.seen[r.sup] == sc.stamp {
					best = float64(r.n) / float64(occ[o.comp])
					break
				}
			}
			if cur, ok := w[o.comp]; !ok || 1-best > cur {
				w[o.comp] = 1 - best
			}
		}
		ix.Examples[i].Compounds = sortedEntries(w)
		bar.Add(1)
	}
	bar.Finish()
	if cfg.Keep > 0 && cfg.Keep < len(ix.Compounds) {
		ix.keepHeaviest(cfg.Keep)
		ix.Keep = cfg.Keep
	}
	return ix, nil
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

// keepHeaviest drops all but the n compounds of largest total weight (ties:
// the smaller canonical text first), renumbering them in their old order.
func (ix *Index) keepHeaviest(n int) {
	total := make([]float64, len(ix.Compounds))
	for _, ex := range ix.Examples {
		for _, c := range ex.Compounds {
			total[c.ID] += c.W
		}
	}
	order := make([]int32, len(ix.Compounds))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(total[b], total[a]); c != 0 {
			return c
		}
		return strings.Compare(ix.Compounds[a], ix.Compounds[b])
	})
	kept := order[:n]
	slices.Sort(kept)
	remap := make([]int32, len(ix.Compounds))
	for i := range remap {
		remap[i] = -1
	}
	names := make([]string, n)
	for j, id := range kept {
		remap[id] = int32(j)
		names[j] = ix.Compounds[id]
	}
	ix.Compounds = names
	for e := range ix.Examples {
		cs := ix.Examples[e].Compounds[:0]
		for _, c := range ix.Examples[e].Compounds {
			if r := remap[c.ID]; r >= 0 {
				cs = append(cs, Entry{ID: r, W: c.W})
			}
		}
		ix.Examples[e].Compounds = cs
	}
}

// scratch holds buffers reused across trees.
type scratch struct {
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
func (sc *scratch) occurrences(f *flat, k int, atoms []string, ids map[string]int32, names *[]string) []occurrence {
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
