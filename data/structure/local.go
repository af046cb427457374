package structure

// Local structures (n-LS) of Bogin et al., "Unobserved Local Structures Make
// Compositional Generalization Hard", §4.1 and App. C: a program tree gets a
// root <s> above its root and edges between consecutive siblings; an n-LS is
// a connected subgraph of 2 to 4 nodes with one of the shapes listed below.

import (
	"fmt"
	"strings"

	"compbench/data"
)

// Root is the label of the node added above every program's root (§4.1).
const Root = "<s>"

// Shape is the kind of a local structure: which nodes it holds and how they
// are connected. The order of a structure's symbols is fixed by its shape.
type Shape uint8

// The shapes of §4.1 (2-LS, 3-LS) and App. C (4-LS), numbered as the paper's
// Fig. 2 and Fig. 6, plus NGram for the sequence baseline of §4.4.
const (
	// PC is a parent and its child: (parent, child). Fig. 2 structure 1.
	PC Shape = iota + 1
	// Sib is two consecutive siblings: (left, right). Structure 2.
	Sib
	// PC2 is two chained parent-child edges: (grandparent, parent, child). Structure 3.
	PC2
	// Sib3 is three consecutive siblings, two sibling edges. Structure 4.
	Sib3
	// PSib is a parent with two consecutive children: (parent, left, right). Structure 5.
	PSib
	// PC3 is three chained parent-child edges. App. C structure 6.
	PC3
	// Sib4 is four consecutive siblings, three sibling edges. Structure 7.
	Sib4
	// GPSib is a grandparent, its child and two consecutive children of that
	// child: (grandparent, parent, left, right). Structure 8.
	GPSib
	// PSib3 is a parent with three consecutive children. Structure 9.
	PSib3
	// NGram is a run of consecutive symbols of the program sequence (§4.4).
	NGram
)

var shapeNames = [...]string{PC: "pc", Sib: "sib", PC2: "pc2", Sib3: "sib3", PSib: "psib",
	PC3: "pc3", Sib4: "sib4", GPSib: "gpsib", PSib3: "psib3", NGram: "ngram"}

func (s Shape) String() string {
	if int(s) < len(shapeNames) && shapeNames[s] != "" {
		return shapeNames[s]
	}
	return fmt.Sprintf("shape%d", int(s))
}

// Size is the number of nodes of the shape (NGram: up to 4, see Structure.Len).
func (s Shape) Size() int {
	switch s {
	case PC, Sib:
		return 2
	case PC2, Sib3, PSib:
		return 3
	case PC3, Sib4, GPSib, PSib3:
		return 4
	}
	return 0
}

// hasPC and hasSib report which edge kinds a shape uses; the NOSIB and NOPC
// ablations of §5.1 keep only shapes built from the remaining kind.
func (s Shape) hasPC() bool {
	return s == PC || s == PC2 || s == PSib || s == PC3 || s == GPSib || s == PSib3
}
func (s Shape) hasSib() bool {
	return s == Sib || s == Sib3 || s == PSib || s == Sib4 || s == GPSib || s == PSib3
}

// none marks an unused symbol slot; hole marks the slot left open in an index key.
const (
	none int32 = -1
	hole int32 = -2
)

// Structure is one local structure: a shape and its symbols (ids in a
// Symbols table), unused slots set to -1. It is comparable, so it is a map key.
type Structure struct {
	Shape Shape
	Sym   [4]int32
}

// Len is the number of symbols the structure holds.
func (s Structure) Len() int {
	n := 0
	for _, x := range s.Sym {
		if x != none {
			n++
		}
	}
	return n
}

// Format renders the structure as "shape(sym, sym, ...)".
func (s Structure) Format(t *Symbols) string {
	var b strings.Builder
	b.WriteString(s.Shape.String())
	b.WriteByte('(')
	for i, x := range s.Sym {
		if x == none {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if x == hole {
			b.WriteString("_")
		} else {
			b.WriteString(t.Name(x))
		}
	}
	b.WriteByte(')')
	return b.String()
}

// Symbols interns symbol names as dense ids.
type Symbols struct {
	ids   map[string]int32
	names []string
}

// NewSymbols returns an empty table.
func NewSymbols() *Symbols { return &Symbols{ids: map[string]int32{}} }

// ID returns the id of name, adding it if new.
func (t *Symbols) ID(name string) int32 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ids[name] = id
	t.names = append(t.names, name)
	return id
}

// Lookup returns the id of name and whether it is known.
func (t *Symbols) Lookup(name string) (int32, bool) {
	id, ok := t.ids[name]
	return id, ok
}

// Name returns the name of id.
func (t *Symbols) Name(id int32) string { return t.names[id] }

// Len is the number of symbols.
func (t *Symbols) Len() int { return len(t.names) }

// Graph is a program tree with root <s>, flattened: node 0 is <s>, nodes are
// numbered in pre-order, and each node lists its children in order. Sibling
// edges are implicit between consecutive entries of Children.
type Graph struct {
	// Label is each node's symbol id.
	Label []int32
	// Parent is each node's parent index (-1 for the root).
	Parent []int32
	// Children lists each node's children in program order.
	Children [][]int32
}

// NewGraph flattens t under a new root <s> (§4.1). If t's own root is
// already labelled <s>, no second root is added.
func NewGraph(t *data.Tree, syms *Symbols) *Graph {
	g := &Graph{}
	if t != nil && t.Label == Root {
		g.add(t, -1, syms)
		return g
	}
	g.Label = append(g.Label, syms.ID(Root))
	g.Parent = append(g.Parent, -1)
	g.Children = append(g.Children, nil)
	if t != nil {
		g.add(t, 0, syms)
	}
	return g
}

func (g *Graph) add(t *data.Tree, parent int32, syms *Symbols) {
	id := int32(len(g.Label))
	g.Label = append(g.Label, syms.ID(t.Label))
	g.Parent = append(g.Parent, parent)
	g.Children = append(g.Children, nil)
	if parent >= 0 {
		g.Children[parent] = append(g.Children[parent], id)
	}
	for _, c := range t.Children {
		g.add(c, id, syms)
	}
}

// Sequence returns the node labels in pre-order, <s> first: the program as
// the flat symbol sequence used by the n-gram baseline of §4.4.
func (g *Graph) Sequence() []int32 { return g.Label }

// Kinds selects which edge kinds the structures and contexts use.
type Kinds uint8

const (
	// ParentChild enables parent-child edges.
	ParentChild Kinds = 1 << iota
	// Siblings enables consecutive-sibling edges.
	Siblings
	// Both is the full graph of §4.1.
	Both = ParentChild | Siblings
)

// shapeAllowed reports whether a shape is built only from enabled edge kinds.
func shapeAllowed(s Shape, k Kinds) bool {
	if s.hasPC() && k&ParentChild == 0 {
		return false
	}
	if s.hasSib() && k&Siblings == 0 {
		return false
	}
	return true
}

func st(shape Shape, a ...int32) Structure {
	s := Structure{Shape: shape, Sym: [4]int32{none, none, none, none}}
	copy(s.Sym[:], a)
	return s
}

// Extract calls emit for every n-LS of g (n in 2..4) whose shape uses only
// the edge kinds in k. A structure that occurs several times is emitted
// each time; callers deduplicate.
//
// Decision (§4.1, App. C): only the listed shapes count. A node, its
// sibling and the sibling's child is connected in G but is not among the
// paper's shapes, so it is not a local structure.
func (g *Graph) Extract(n int, k Kinds, emit func(Structure)) {
	ok := func(s Shape) bool { return s.Size() <= n && shapeAllowed(s, k) }
	L := g.Label
	for v := range g.Label {
		ch := g.Children[v]
		for i, c := range ch {
			if ok(PC) {
				emit(st(PC, L[v], L[c]))
			}
			if i+1 < len(ch) {
				if ok(Sib) {
					emit(st(Sib, L[c], L[ch[i+1]]))
				}
				if ok(PSib) {
					emit(st(PSib, L[v], L[c], L[ch[i+1]]))
				}
			}
			if i+2 < len(ch) {
				if ok(Sib3) {
					emit(st(Sib3, L[c], L[ch[i+1]], L[ch[i+2]]))
				}
				if ok(PSib3) {
					emit(st(PSib3, L[v], L[c], L[ch[i+1]], L[ch[i+2]]))
				}
			}
			if i+3 < len(ch) && ok(Sib4) {
				emit(st(Sib4, L[c], L[ch[i+1]], L[ch[i+2]], L[ch[i+3]]))
			}
			gch := g.Children[c]
			for j, gc := range gch {
				if ok(PC2) {
					emit(st(PC2, L[v], L[c], L[gc]))
				}
				if ok(PC3) {
					for _, ggc := range g.Children[gc] {
						emit(st(PC3, L[v], L[c], L[gc], L[ggc]))
					}
				}
				if j+1 < len(gch) && ok(GPSib) {
					emit(st(GPSib, L[v], L[c], L[gc], L[gch[j+1]]))
				}
			}
		}
	}
}

// ExtractNGrams calls emit for every run of n consecutive symbols of seq
// (n in 2..4): the structures of the n-gram baseline (§4.4).
func ExtractNGrams(seq []int32, n int, emit func(Structure)) {
	for i := 0; i+n <= len(seq); i++ {
		emit(st(NGram, seq[i:i+n]...))
	}
}
