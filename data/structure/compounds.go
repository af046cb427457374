package structure

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

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
	// weight summed over the pool (Keysers et al. §2.1); 0 keeps them all;
	// KeepAuto keeps the heaviest that together hold AutoKeepWeight of the
	// pool's total compound weight.
	Keep int
	// Supergraphs says which supergraphs an occurrence's weight ranges
	// over: SupersAll (every enumerated superset, Keysers et al.'s
	// definition), SupersOneNode (the minimal ones, see Build), or "" to
	// choose: all where the trees hold at most ExactPerTree subtrees each
	// on average, else one-node.
	Supergraphs string
	// Atoms says how an example counts its atoms in F_A: AtomsPerExample
	// (or ""), once per example that uses the atom, or AtomsPerOccurrence,
	// once per node. Keysers et al. §2.1 weigh a compound "in a sample" (the
	// largest weight of its occurrences there), so each example counts a
	// compound at most once; compbench reads F_A the same way. On SCAN this
	// reading gives Table 3's atom divergences (output length split 0.036
	// against the paper's 0.034; per occurrence, 0.046), see docs/splits.md.
	Atoms string
	// Measure names the definition of compounds: MeasureKeysers (or "")
	// or MeasureNQG (parent-child pairs by argument slot, counted per
	// occurrence, see buildNQG), which has no sizes, weights or
	// selection: MaxSize must be 0 or 2, and Keep and Supergraphs are
	// not used.
	Measure string
}

// Atom counts for CompoundConfig.Atoms.
const (
	AtomsPerExample    = "example"
	AtomsPerOccurrence = "occurrence"
)

// Supergraph sets for CompoundConfig.Supergraphs.
const (
	SupersAll     = "all"
	SupersOneNode = "one-node"
)

// ExactPerTree is the most subtrees per tree, on average, for which the
// automatic choice weighs over every supergraph.
const ExactPerTree = 96

// KeepAuto is the Keep value that chooses the number kept from the data.
const KeepAuto = -1

// AutoKeepWeight is the share of the pool's total compound weight the
// compounds KeepAuto keeps hold.
const AutoKeepWeight = 0.99

// DefaultCompoundConfig chooses the size from the data (MaxSize 0, see
// AutoMaxSize) and keeps the heaviest compounds (KeepAuto).
func DefaultCompoundConfig() CompoundConfig { return CompoundConfig{Keep: KeepAuto} }

// Auto size limits: the largest compound size AutoMaxSize picks, and the
// subtrees per tree, on average over the pool, it allows.
const (
	AutoSizeCap  = 10
	AutoPerTree  = 1000
	autoSizeLow  = 3
	subtreeCount = MaxCompoundSize + 1
)

// AutoMaxSize is the compound size MaxSize 0 stands for: the largest size up
// to AutoSizeCap for which the trees hold at most AutoPerTree subtrees of
// 2..size nodes each on average, and at least 3. Keysers et al. (§2.1)
// "first generate a large subset of subgraphs, then weight them in context
// of their occurrence, and keep only the ones with highest sum of weights";
// the subset here is every subtree up to this size, bounded by what the
// index can enumerate (each subtree and its one-node extensions are named
// three times, see Build). A fixed small size misses the compounds that
// tell examples apart on deep, chain-like trees (a SCAN phrase is a chain of
// 6 rule applications, a whole command up to 15; commands of Shi et al.'s
// grammar join up to 10 phrases, where 3-node compounds occur everywhere),
// while bushy trees (CFQ) have too many large subtrees to enumerate. The
// cap, 10, is the size that gave original SCAN its highest MCD divergence.
func AutoMaxSize(trees []*data.Tree) int {
	total := subtreeTotals(trees)
	best, sum := autoSizeLow, 0.0
	for s := 2; s <= AutoSizeCap; s++ {
		sum += total[s]
		if s > autoSizeLow && sum <= AutoPerTree*float64(max(len(trees), 1)) {
			best = s
		}
	}
	return best
}

// SubtreesPerTree is the average number of subtrees of 2..k nodes per tree.
func SubtreesPerTree(trees []*data.Tree, k int) float64 {
	total := subtreeTotals(trees)
	sum := 0.0
	for s := 2; s <= min(k, MaxCompoundSize); s++ {
		sum += total[s]
	}
	return sum / float64(max(len(trees), 1))
}

// subtreeTotals counts the subtrees of exactly s nodes over all trees.
func subtreeTotals(trees []*data.Tree) [subtreeCount]float64 {
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
	return total
}

// MaxCompoundSize bounds MaxSize: the number of subtrees grows quickly with
// it on bushy trees.
const MaxCompoundSize = 16

// Validate checks the configuration.
func (c CompoundConfig) Validate() error {
	if c.MaxSize != 0 && (c.MaxSize < 2 || c.MaxSize > MaxCompoundSize) {
		return fmt.Errorf("compound size %d: want 2 to %d nodes", c.MaxSize, MaxCompoundSize)
	}
	if c.Supergraphs != "" && c.Supergraphs != SupersAll && c.Supergraphs != SupersOneNode {
		return fmt.Errorf("supergraphs %q: want %q, %q or empty (chosen from the data)", c.Supergraphs, SupersAll, SupersOneNode)
	}
	if c.Atoms != "" && c.Atoms != AtomsPerExample && c.Atoms != AtomsPerOccurrence {
		return fmt.Errorf("atom count %q: want %q or %q", c.Atoms, AtomsPerExample, AtomsPerOccurrence)
	}
	switch c.Measure {
	case "", MeasureKeysers:
	case MeasureNQG:
		if c.MaxSize != 0 && c.MaxSize != NQGCompoundSize {
			return fmt.Errorf("compound size %d: measure %s's compounds are %d nodes", c.MaxSize, MeasureNQG, NQGCompoundSize)
		}
	default:
		return fmt.Errorf("compound measure %q: want %s", c.Measure, strings.Join(Measures, " or "))
	}
	if c.Keep < KeepAuto {
		return fmt.Errorf("compounds kept %d: want >= 0, or %d to choose from the data", c.Keep, KeepAuto)
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
	// Supergraphs is the supergraph set the weights used (SupersAll or
	// SupersOneNode).
	Supergraphs string
	// AtomCount is how examples count atoms (AtomsPerExample or
	// AtomsPerOccurrence).
	AtomCount string
	// Measure is MeasureKeysers or MeasureNQG (see CompoundConfig).
	Measure string
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
// weight of its occurrences there. When Keep is set, only the Keep
// compounds with the largest total weight over the pool remain ("keep only
// the ones with highest sum of weights", §2.1).
//
// The supergraphs of an occurrence g are the compounds one node larger
// that contain it: g plus its top node's parent, or plus a child of one of
// its nodes (its minimal strict supergraphs, within MaxSize, so compounds
// of exactly MaxSize nodes weigh 1). This is compbench's reading of "the
// maximum over supergraphs" made practical. Any occurrence h of a larger
// supergraph G2 around g holds a one-node extension of g; when G occurs in
// G2 only once, the same one for every such g, so P(G2|G) <= P(G1|G) for
// that one-node supergraph G1 and the maximum is unchanged. It can differ
// only where a supergraph holds G at two places (r(a(b), a(b)) for a(b)),
// and listing every superset of every occurrence cost far more than the
// subtrees themselves on trees of dozens of nodes.
//
// Subtrees are hash-consed: a rooted subtree is its top node's label and,
// per argument slot, the id of the subtree chosen below it (or none), so an
// occurrence and its one-node extensions are named without building text.
// Memory stays proportional to the pool and its distinct compounds: the
// subtrees of a tree are enumerated twice (once to count, once to weigh)
// rather than stored.
func Build(trees []*data.Tree, cfg CompoundConfig, rep progress.Reporter) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for i, t := range trees {
		if t == nil {
			return nil, fmt.Errorf("example %d has no tree", i)
		}
	}
	if cfg.Measure == MeasureNQG {
		return buildNQG(trees, cfg, rep)
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = AutoMaxSize(trees)
	}
	ix := &Index{MaxSize: cfg.MaxSize, Measure: MeasureKeysers, Examples: make([]Example, len(trees))}
	var wg weigher
	switch cfg.Supergraphs {
	case SupersAll:
		wg = newExactWeigher(cfg.MaxSize)
	case SupersOneNode:
		wg = newOneNodeWeigher(cfg.MaxSize, &ix.Atoms)
	default:
		if SubtreesPerTree(trees, cfg.MaxSize) <= ExactPerTree {
			wg, cfg.Supergraphs = newExactWeigher(cfg.MaxSize), SupersAll
		} else {
			wg, cfg.Supergraphs = newOneNodeWeigher(cfg.MaxSize, &ix.Atoms), SupersOneNode
		}
	}
	ix.Supergraphs = cfg.Supergraphs
	ix.AtomCount = cfg.Atoms
	if ix.AtomCount == "" {
		ix.AtomCount = AtomsPerExample
	}
	perExample := ix.AtomCount == AtomsPerExample
	atomID := map[string]int32{}
	passes := 2
	if cfg.Keep != 0 {
		passes = 3
	}
	bar := progress.Or(rep).Bar("compounds", int64(passes*len(trees)))
	for i, t := range trees {
		f := flatten(t, atomID, &ix.Atoms)
		wg.count(&f, ix.Atoms)
		ix.Examples[i].Atoms = atomCounts(f.atom, perExample)
		bar.Add(1)
	}
	ix.Compounds = wg.compounds()
	wg.finish()
	// Pass 2 weighs every occurrence; when compounds are dropped it only
	// sums their weights, and pass 3 weighs again, keeping the chosen
	// ones, so memory holds only the kept entries.
	keep := cfg.Keep != 0
	var total []float64
	if keep {
		total = make([]float64, len(ix.Compounds))
	}
	weighPass(trees, wg, atomID, ix.Atoms, len(ix.Compounds), func(i int, es []Entry) {
		if keep {
			for _, e := range es {
				total[e.ID] += e.W
			}
		} else {
			ix.Examples[i].Compounds = slices.Clone(es)
		}
		bar.Add(1)
	})
	if keep {
		remap := ix.keepHeaviest(total, cfg.Keep)
		weighPass(trees, wg, atomID, ix.Atoms, len(remap), func(i int, es []Entry) {
			n := 0
			for _, e := range es {
				if remap[e.ID] >= 0 {
					n++
				}
			}
			kept := make([]Entry, 0, n)
			for _, e := range es { // remap keeps the old order, so kept stays sorted
				if r := remap[e.ID]; r >= 0 {
					kept = append(kept, Entry{ID: r, W: e.W})
				}
			}
			ix.Examples[i].Compounds = kept
			bar.Add(1)
		})
	}
	bar.Finish()
	return ix, nil
}

// weighBlock is how many trees a weighing pass hands out between two
// merges. It is fixed, so what visit sees, and in which order, never
// depends on the number of workers.
const weighBlock = 512

// weighWorkers is how many goroutines weigh trees (tests vary it).
var weighWorkers = func() int { return runtime.GOMAXPROCS(0) }

// weighPass weighs every tree on up to weighWorkers goroutines, each with
// its own fork of wg (the tables pass 1 built are only read), and calls
// visit on the calling goroutine for each tree in input order with its
// compounds (ids as wg numbers them, sorted by id; es is reused after
// visit returns). A tree's entries depend only on the tree and the tables,
// and visit sees them in input order, so sums taken in visit are the same
// bits whatever the number of workers.
func weighPass(trees []*data.Tree, wg weigher, atomID map[string]int32, atoms []string, nComp int, visit func(i int, es []Entry)) {
	workers := max(1, min(weighWorkers(), (len(trees)+63)/64))
	forks := make([]weigher, workers)
	ws := make([]occWeights, workers)
	for k := range forks {
		forks[k] = wg.fork()
		ws[k] = newOccWeights(nComp)
	}
	out := make([][]Entry, min(weighBlock, len(trees)))
	for lo := 0; lo < len(trees); lo += weighBlock {
		hi := min(lo+weighBlock, len(trees))
		var next atomic.Int64
		next.Store(int64(lo))
		work := func(k int) {
			at := atoms // no new atoms after pass 1: flatten only reads
			for {
				i := int(next.Add(1) - 1)
				if i >= hi {
					return
				}
				f := flatten(trees[i], atomID, &at)
				forks[k].weigh(&f, atoms, &ws[k])
				out[i-lo] = ws[k].entries(out[i-lo][:0])
			}
		}
		var done sync.WaitGroup
		for k := 1; k < workers; k++ {
			done.Add(1)
			go func() {
				defer done.Done()
				work(k)
			}()
		}
		work(0)
		done.Wait()
		for i := lo; i < hi; i++ {
			visit(i, out[i-lo])
		}
	}
}

// occWeights collects one tree's compound weights: the largest weight of
// each compound's occurrences, in arrays over the compound ids.
type occWeights struct {
	val  []float64
	seen []bool
	ids  []int32 // the compounds seen, in order of first occurrence
}

func newOccWeights(n int) occWeights {
	return occWeights{val: make([]float64, n), seen: make([]bool, n)}
}

// max records an occurrence of compound g weighing wt.
func (o *occWeights) max(g int32, wt float64) {
	if !o.seen[g] {
		o.seen[g], o.val[g] = true, wt
		o.ids = append(o.ids, g)
	} else if wt > o.val[g] {
		o.val[g] = wt
	}
}

// entries appends the weights to dst sorted by id and clears o.
func (o *occWeights) entries(dst []Entry) []Entry {
	slices.Sort(o.ids)
	for _, g := range o.ids {
		dst = append(dst, Entry{ID: g, W: o.val[g]})
		o.seen[g] = false
	}
	o.ids = o.ids[:0]
	return dst
}

// weigher enumerates a tree's compounds and weighs their occurrences:
// count sees every tree once, finish closes the counts, weigh fills w with
// a tree's compound weights (the largest over its occurrences). fork
// returns a weigher for another goroutine: it shares the counts, which
// weigh only reads, and has its own buffers.
type weigher interface {
	count(f *flat, atoms []string)
	compounds() []string
	finish()
	weigh(f *flat, atoms []string, w *occWeights)
	fork() weigher
}

// oneNodeWeigher weighs occurrences over their one-node supergraphs on
// hash-consed subtrees (see Build).
type oneNodeWeigher struct {
	k      int
	tt     *typeTable
	occ    []int32          // compound id -> occurrences in the pool
	sup    map[uint64]int32 // (G, G') -> occurrences of G inside some G'
	sc     scratch
	supers []int32
}

func newOneNodeWeigher(k int, atoms *[]string) *oneNodeWeigher {
	return &oneNodeWeigher{k: k, tt: newTypeTable(atoms), sup: map[uint64]int32{}}
}

func (x *oneNodeWeigher) count(f *flat, _ []string) {
	x.sc.subtrees(f, x.k, x.tt, true)
	for len(x.occ) < len(x.tt.names) {
		x.occ = append(x.occ, 0)
	}
	for e := range x.sc.elems {
		el := &x.sc.elems[e]
		if el.size < 2 {
			continue
		}
		g := x.tt.comp[el.typ]
		x.occ[g]++
		x.supers = x.sc.supers(f, e, x.k, x.tt, x.supers[:0])
		for _, s := range x.supers {
			x.sup[pairKey(g, x.tt.comp[s])]++
		}
	}
}

func (x *oneNodeWeigher) compounds() []string { return x.tt.names }

func (x *oneNodeWeigher) finish() {}

func (x *oneNodeWeigher) fork() weigher {
	tt := *x.tt // intern without adding only reads the tables, but writes key
	tt.key = nil
	return &oneNodeWeigher{k: x.k, tt: &tt, occ: x.occ, sup: x.sup}
}

func (x *oneNodeWeigher) weigh(f *flat, _ []string, w *occWeights) {
	x.sc.subtrees(f, x.k, x.tt, false)
	for e := range x.sc.elems {
		el := &x.sc.elems[e]
		if el.size < 2 {
			continue
		}
		g := x.tt.comp[el.typ]
		best := int32(0) // the most frequent supergraph of G around e
		x.supers = x.sc.supers(f, e, x.k, x.tt, x.supers[:0])
		for _, s := range x.supers {
			best = max(best, x.sup[pairKey(g, x.tt.comp[s])])
		}
		w.max(g, 1-float64(best)/float64(x.occ[g]))
	}
}

// typeTable hash-conses rooted subtrees: a type is a label and, per
// argument slot, the type below it or none. Types of two or more nodes are
// compounds, numbered in order of first appearance.
type typeTable struct {
	small map[[4]int32]int32 // nodes of up to 3 slots: label, then slots
	large map[string]int32   // more slots: label and slots as varints
	size  []int32            // nodes in the type
	comp  []int32            // compound id, -1 for single nodes
	names []string           // compound id -> canonical text
	atom  []int32            // type -> label's atom id
	slots [][]int32          // type -> slot types (nil for a single node)
	key   []byte
	atoms *[]string // atom id -> label, for names
}

func newTypeTable(atoms *[]string) *typeTable {
	return &typeTable{small: map[[4]int32]int32{}, large: map[string]int32{}, atoms: atoms}
}

// Slot markers in small keys.
const (
	slotNone  = -1 // the slot's child is outside the subtree
	slotUnset = -2 // no such slot
	leafKey   = -3 // a node with no chosen children, whatever its arity
)

// intern returns the type of label atom over slots (slotNone for a child
// outside), adding it when add is set, else -1 when unknown. A node with no
// chosen child is the same type whatever its arity, as its text is.
func (tt *typeTable) intern(atom int32, slots []int32, add bool) int32 {
	open := false
	for _, s := range slots {
		open = open || s != slotNone
	}
	var id int32
	var ok bool
	var sk [4]int32
	if !open || len(slots) <= 3 {
		sk = [4]int32{atom, leafKey, leafKey, leafKey}
		if open {
			sk[1], sk[2], sk[3] = slotUnset, slotUnset, slotUnset
			copy(sk[1:], slots)
		}
		id, ok = tt.small[sk]
	} else {
		tt.key = binary.AppendUvarint(tt.key[:0], uint64(atom))
		for _, s := range slots {
			tt.key = binary.AppendUvarint(tt.key, uint64(s+1))
		}
		id, ok = tt.large[string(tt.key)]
	}
	if ok || !add {
		if !ok {
			return -1
		}
		return id
	}
	id = int32(len(tt.size))
	if !open || len(slots) <= 3 {
		tt.small[sk] = id
	} else {
		tt.large[string(tt.key)] = id
	}
	size := int32(1)
	var kept []int32
	if open {
		kept = append([]int32(nil), slots...)
		for _, s := range slots {
			if s >= 0 {
				size += tt.size[s]
			}
		}
	}
	tt.size = append(tt.size, size)
	tt.atom = append(tt.atom, atom)
	tt.slots = append(tt.slots, kept)
	if size < 2 {
		tt.comp = append(tt.comp, -1)
		return id
	}
	tt.comp = append(tt.comp, int32(len(tt.names)))
	var b strings.Builder
	tt.text(&b, id, *tt.atoms)
	tt.names = append(tt.names, b.String())
	return id
}

// text writes a type canonically: a node with no chosen children is its
// label; a node with chosen children is label(slot, ...) listing all of its
// argument slots, "_" for a child outside the compound, so argument
// position is part of the compound (TMCD writes FunQL compounds the same
// way, e.g. most( __ , loc_1 , __ )).
func (tt *typeTable) text(b *strings.Builder, id int32, atoms []string) {
	b.WriteString(quoteLabel(atoms[tt.atom[id]]))
	if tt.slots[id] == nil {
		return
	}
	b.WriteByte('(')
	for i, s := range tt.slots[id] {
		if i > 0 {
			b.WriteString(", ")
		}
		if s >= 0 {
			tt.text(b, s, atoms)
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte(')')
}

// elem is one rooted subtree of a tree: its type, node count, top node,
// and per argument slot of the top node the elem chosen below (-1: none).
type elem struct {
	typ  int32
	size int32
	node int32
	kids []int32
	// ext lists the types of this subtree plus one node below its top
	// (filled when size < MaxSize).
	ext []int32
}

// scratch holds a tree's subtrees and buffers reused across trees.
type scratch struct {
	elems  []elem
	byNode [][]int32 // node -> its elems, the single node first
	slots  []int32
	kidBuf []int32
	extBuf []int32
}

// subtrees lists every rooted subtree of f with at most k nodes, children
// before parents, naming each by its type (adding new types when add is
// set; on the second pass every type is known) and, below k nodes, the
// types of its one-node extensions downward.
func (sc *scratch) subtrees(f *flat, k int, tt *typeTable, add bool) {
	n := len(f.atom)
	sc.elems = sc.elems[:0]
	sc.kidBuf = sc.kidBuf[:0]
	sc.extBuf = sc.extBuf[:0]
	for len(sc.byNode) < n {
		sc.byNode = append(sc.byNode, nil)
	}
	for v := n - 1; v >= 0; v-- { // pre-order: children after parents
		ch := f.children[v]
		first := int32(len(sc.elems))
		sc.byNode[v] = sc.byNode[v][:0]
		// Grow partial choices slot by slot: each is an elem whose kids
		// beyond the current slot are still -1.
		start := len(sc.kidBuf)
		for range ch {
			sc.kidBuf = append(sc.kidBuf, -1)
		}
		sc.elems = append(sc.elems, elem{size: 1, node: int32(v), kids: sc.kidBuf[start:len(sc.kidBuf):len(sc.kidBuf)]})
		for j, c := range ch {
			end := int32(len(sc.elems))
			for p := first; p < end; p++ {
				for _, ce := range sc.byNode[c] {
					cs := sc.elems[ce].size
					if sc.elems[p].size+cs > int32(k) {
						continue
					}
					start := len(sc.kidBuf)
					sc.kidBuf = append(sc.kidBuf, sc.elems[p].kids...)
					kids := sc.kidBuf[start:len(sc.kidBuf):len(sc.kidBuf)]
					kids[j] = ce
					sc.elems = append(sc.elems, elem{size: sc.elems[p].size + cs, node: int32(v), kids: kids})
				}
			}
		}
		for e := first; e < int32(len(sc.elems)); e++ {
			el := &sc.elems[e]
			sc.slots = sc.slots[:0]
			for _, ke := range el.kids {
				if ke < 0 {
					sc.slots = append(sc.slots, slotNone)
				} else {
					sc.slots = append(sc.slots, sc.elems[ke].typ)
				}
			}
			el.typ = tt.intern(f.atom[v], sc.slots, add)
			if el.typ < 0 {
				panic("compound unseen on the first pass")
			}
			sc.byNode[v] = append(sc.byNode[v], e)
		}
		for e := first; e < int32(len(sc.elems)); e++ {
			if sc.elems[e].size < int32(k) {
				sc.extend(f, e, tt, add)
			}
		}
	}
}

// extend fills the one-node downward extensions of elem e: for each slot,
// the child added as a single node when the slot is empty, or each
// extension of the elem chosen there.
func (sc *scratch) extend(f *flat, e int32, tt *typeTable, add bool) {
	el := &sc.elems[e]
	v := el.node
	start := len(sc.extBuf)
	for j, ke := range el.kids {
		var alts []int32
		if ke < 0 {
			alts = []int32{sc.elems[sc.byNode[f.children[v][j]][0]].typ}
		} else {
			alts = sc.elems[ke].ext
		}
		for _, a := range alts {
			sc.slots = sc.slots[:0]
			for jj, kk := range el.kids {
				switch {
				case jj == j:
					sc.slots = append(sc.slots, a)
				case kk < 0:
					sc.slots = append(sc.slots, slotNone)
				default:
					sc.slots = append(sc.slots, sc.elems[kk].typ)
				}
			}
			sc.extBuf = append(sc.extBuf, tt.intern(f.atom[v], sc.slots, add))
		}
	}
	el.ext = sc.extBuf[start:len(sc.extBuf):len(sc.extBuf)]
}

// supers appends to out the distinct compounds one node larger than elem e
// that contain it (its downward extensions and its top node's parent
// added), none when e already has k nodes.
func (sc *scratch) supers(f *flat, e int, k int, tt *typeTable, out []int32) []int32 {
	el := &sc.elems[e]
	if el.size >= int32(k) {
		return out
	}
	out = append(out, el.ext...)
	if p := f.parent[el.node]; p >= 0 {
		sc.slots = sc.slots[:0]
		for _, c := range f.children[p] {
			if c == el.node {
				sc.slots = append(sc.slots, el.typ)
			} else {
				sc.slots = append(sc.slots, slotNone)
			}
		}
		out = append(out, tt.intern(f.atom[p], sc.slots, false))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func pairKey(g, sup int32) uint64 { return uint64(uint32(g))<<32 | uint64(uint32(sup)) }

// keepHeaviest chooses the compounds to keep from their total weights over
// the pool: the n heaviest (ties: the smaller canonical text first), or
// with n = KeepAuto the fewest heaviest that hold AutoKeepWeight of the
// total weight (and every compound tied with the last one taken). It
// renames the kept compounds in their old order and returns the old id ->
// new id map (-1: dropped).
func (ix *Index) keepHeaviest(total []float64, n int) []int32 {
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
	if n == KeepAuto {
		all := 0.0
		for _, x := range total {
			all += x
		}
		acc := 0.0
		n = 0
		for n < len(order) && (acc < AutoKeepWeight*all || n > 0 && total[order[n]] == total[order[n-1]]) {
			acc += total[order[n]]
			n++
		}
	}
	n = min(n, len(order))
	kept := append([]int32(nil), order[:n]...)
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
	ix.Keep = n
	return remap
}

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

// quoteLabel quotes a label that could be confused with compound syntax.
func quoteLabel(s string) string {
	if s == "" || s == "_" || strings.ContainsAny(s, "(), \"\\\t\n") {
		return strconv.Quote(s)
	}
	return s
}

// atomCounts counts each atom of a tree: once, or once per node.
func atomCounts(atoms []int32, once bool) []Entry {
	m := map[int32]float64{}
	for _, a := range atoms {
		if once {
			m[a] = 1
		} else {
			m[a]++
		}
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
