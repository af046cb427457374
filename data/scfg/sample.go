package scfg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"compbench/data"
)

// maxNodes bounds one derivation so a wide recursive grammar with a large
// depth fails with a message instead of exhausting memory.
const maxNodes = 1 << 20

// Sampler draws derivations top-down, choosing uniformly among the rules of
// a non-terminal that can still finish within the remaining depth.
type Sampler struct {
	g *Grammar
	// ruleDepth[id] is the depth of the shallowest derivation starting
	// with rule id (a rule with no non-terminals has depth 1).
	ruleDepth []int
	// ntDepth[nt] is the smallest ruleDepth over nt's rules.
	ntDepth map[string]int
}

// NewSampler precomputes the shallowest derivation depth of every rule.
func NewSampler(g *Grammar) *Sampler {
	s := &Sampler{g: g, ruleDepth: make([]int, len(g.Rules)), ntDepth: map[string]int{}}
	for i := range s.ruleDepth {
		s.ruleDepth[i] = math.MaxInt
	}
	for nt := range g.byLHS {
		s.ntDepth[nt] = math.MaxInt
	}
	// Fixed point: each pass can only lower depths, and a depth is at most
	// the number of non-terminals, so this ends after that many passes.
	for changed := true; changed; {
		changed = false
		for i := range g.Rules {
			r := &g.Rules[i]
			d := 1
			for _, c := range r.Children() {
				cd := s.ntDepth[c]
				if cd == math.MaxInt {
					d = math.MaxInt
					break
				}
				d = max(d, cd+1)
			}
			if d < s.ruleDepth[i] {
				s.ruleDepth[i] = d
				changed = true
			}
			if d < s.ntDepth[r.LHS] {
				s.ntDepth[r.LHS] = d
			}
		}
	}
	return s
}

// MinDepth is the depth of the shallowest derivation of nt, or an error when
// nt cannot derive a finite string at all.
func (s *Sampler) MinDepth(nt string) (int, error) {
	d, ok := s.ntDepth[nt]
	if !ok {
		return 0, fmt.Errorf("unknown non-terminal %q", nt)
	}
	if d == math.MaxInt {
		return 0, fmt.Errorf("non-terminal %q never derives a finite string", nt)
	}
	return d, nil
}

// Derivation is one sampled example.
type Derivation struct {
	// Tree has one node per rule applied, labelled with Rule.Label; its
	// children follow the program side's non-terminals in order.
	Tree *data.Tree
	// Program is the program tokens joined by single spaces.
	Program string
	// Utterance is the utterance words joined by single spaces.
	Utterance string
}

// Sample draws one derivation of start whose tree is at most maxDepth deep
// (the root has depth 1). Among a non-terminal's rules only those that can
// finish within the remaining depth are candidates; the choice among them is
// uniform.
func (s *Sampler) Sample(rng *rand.Rand, start string, maxDepth int) (*Derivation, error) {
	d, err := s.MinDepth(start)
	if err != nil {
		return nil, err
	}
	if d > maxDepth {
		return nil, fmt.Errorf("%q needs depth %d; max depth %d is too small", start, d, maxDepth)
	}
	nodes := 0
	n, err := s.expand(rng, start, maxDepth, &nodes)
	if err != nil {
		return nil, err
	}
	var prog, nl []string
	s.terminals(n, false, &prog)
	s.terminals(n, true, &nl)
	return &Derivation{Tree: n.tree(s.g), Program: render(prog, true), Utterance: render(nl, false)}, nil
}

// node is a derivation node before labels are attached.
type node struct {
	rule     int
	children []*node
}

func (n *node) tree(g *Grammar) *data.Tree {
	t := &data.Tree{Label: g.Rules[n.rule].Label}
	for _, c := range n.children {
		t.Children = append(t.Children, c.tree(g))
	}
	return t
}

func (s *Sampler) expand(rng *rand.Rand, nt string, depth int, nodes *int) (*node, error) {
	*nodes++
	if *nodes > maxNodes {
		return nil, fmt.Errorf("derivation exceeds %d rules; lower the max depth", maxNodes)
	}
	ids := s.g.byLHS[nt]
	allowed := make([]int, 0, len(ids))
	for _, id := range ids {
		if s.ruleDepth[id] <= depth {
			allowed = append(allowed, id)
		}
	}
	if len(allowed) == 0 { // unreachable: the parent checked ntDepth
		panic(fmt.Sprintf("scfg: no rule of %q fits depth %d", nt, depth))
	}
	id := allowed[rng.IntN(len(allowed))]
	n := &node{rule: id}
	for _, c := range s.g.Rules[id].Children() {
		cn, err := s.expand(rng, c, depth-1, nodes)
		if err != nil {
			return nil, err
		}
		n.children = append(n.children, cn)
	}
	return n, nil
}

// terminals appends the terminal strings of one side in order.
func (s *Sampler) terminals(n *node, nlSide bool, out *[]string) {
	r := &s.g.Rules[n.rule]
	syms := r.Program
	if nlSide {
		syms = r.NL
	}
	k := 0
	for _, sym := range syms {
		if sym.Terminal {
			*out = append(*out, sym.Text)
			continue
		}
		child := k
		if nlSide {
			child = r.nlLink[k]
		}
		k++
		s.terminals(n.children[child], nlSide, out)
	}
}

// render joins terminals into single-spaced tokens. Between '[' and ']'
// everything is glued to the token before the '[' (query_attr[color]).
// On the program side a terminal with inner spaces is one symbol, written
// with '_' (Bogin et al. Table 9 writes COVR's 'playing with' as the program
// symbol playing_with); on the utterance side it is several words, and a
// blank terminal (COVR's ' ' for scene()) contributes none.
func render(terms []string, program bool) string {
	var toks []string
	depth := 0
	for _, t := range terms {
		switch {
		case t == "[":
			if len(toks) == 0 {
				toks = append(toks, "")
			}
			toks[len(toks)-1] += "["
			depth++
			continue
		case t == "]" && depth > 0:
			toks[len(toks)-1] += "]"
			depth--
			continue
		}
		words := strings.Fields(t)
		if len(words) == 0 {
			continue
		}
		if depth > 0 {
			toks[len(toks)-1] += strings.Join(words, "_")
			continue
		}
		if program {
			toks = append(toks, strings.Join(words, "_"))
		} else {
			toks = append(toks, words...)
		}
	}
	return strings.Join(toks, " ")
}
