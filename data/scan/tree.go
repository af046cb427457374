package scan

import "compbench/data"

// Rule names label the nodes of a derivation tree: one name per production
// of Fig. 2, written "LHS := RHS" as in the paper. ("->" would be stored as
// "-\u003e" because JSON writers escape '>'.)
const (
	RuleAfter  = "C := C after C"
	RuleCD     = "C := D"
	RuleAnd    = "D := D and D"
	RuleDP     = "D := P"
	RuleOnce   = "P := Q"
	RuleTwice  = "P := Q twice"
	RuleThrice = "P := Q thrice"
	RuleQL     = "Q := l"
	RuleQR     = "Q := r"
	RuleQA     = "Q := a"
	RuleTurn   = "v := turn"
	RuleVA     = "v := a"
)

// ruleDir names the l and r productions, indexed [Dir][Form].
var ruleDir = [3][4]string{
	Left:  {Plain: "l := v left", Opposite: "l := v opposite left", Around: "l := v around left"},
	Right: {Plain: "r := v right", Opposite: "r := v opposite right", Around: "r := v around right"},
}

// ruleAction names the a productions ("a := jump").
var ruleAction = [4]string{"a := walk", "a := look", "a := run", "a := jump"}

var ruleTimes = [4]string{1: RuleOnce, 2: RuleTwice, 3: RuleThrice}

// Rules lists every rule name, for documentation and tests.
var Rules = []string{RuleAfter, RuleCD, RuleAnd, RuleDP, RuleOnce, RuleTwice, RuleThrice,
	RuleQL, RuleQR, RuleQA,
	ruleDir[Left][Plain], ruleDir[Left][Opposite], ruleDir[Left][Around],
	ruleDir[Right][Plain], ruleDir[Right][Opposite], ruleDir[Right][Around],
	RuleTurn, RuleVA, ruleAction[Walk], ruleAction[Look], ruleAction[Run], ruleAction[Jump]}

// Tree returns the derivation of the command. Chains of "after" and of "and"
// associate to the left, so "A and B and C" is D(D(A) and D(B)) and D(C); the
// grammar leaves this open and the translation does not depend on it.
//
// Trees are read-only: the subtree of a phrase (D := P and below) is shared
// by every command that uses the same phrase, which makes generation several
// times faster. Copy a tree before changing it.
func (c *Command) Tree() *data.Tree {
	nodes := 1 // the first group's "C := D"
	for _, cj := range c.Conjs {
		nodes++ // "D := D and D", or "C := C after C" and the next group's "C := D"
		if cj == After {
			nodes++
		}
	}
	a := arena{nodes: make([]data.Tree, 0, nodes), kids: make([]*data.Tree, 0, nodes+len(c.Parts))}

	var root *data.Tree
	start := 0
	for i := 0; i <= len(c.Conjs); i++ {
		if i < len(c.Conjs) && c.Conjs[i] != After {
			continue
		}
		g := a.node(RuleCD, a.group(c.Parts[start:i+1]))
		if root == nil {
			root = g
		} else {
			root = a.node(RuleAfter, root, g)
		}
		start = i + 1
	}
	return root
}

// partTree returns the shared derivation of a phrase; a leaf "?" if the
// phrase is not valid.
func partTree(p Part) *data.Tree {
	if i := p.index(); i >= 0 {
		return partTrees[i]
	}
	return &data.Tree{Label: "?"}
}

// partTrees holds the derivation "D := P(...)" of every valid phrase.
var partTrees = buildPartTrees()

func buildPartTrees() []*data.Tree {
	t := make([]*data.Tree, len(partTable))
	for i, pt := range partTable {
		if pt.words == "" {
			continue
		}
		c, err := Parse(pt.words)
		if err != nil {
			panic(err) // the table holds only valid phrases
		}
		var a arena
		t[i] = a.node(RuleDP, a.part(c.Parts[0]))
	}
	return t
}

// arena hands out the nodes and child slots of one tree from two slices.
// Sized in advance, they are allocated once; if they must grow, earlier
// nodes stay valid in the old arrays.
type arena struct {
	nodes []data.Tree
	kids  []*data.Tree
}

func (a *arena) node(label string, children ...*data.Tree) *data.Tree {
	a.nodes = append(a.nodes, data.Tree{Label: label})
	n := &a.nodes[len(a.nodes)-1]
	if len(children) > 0 {
		k := len(a.kids)
		a.kids = append(a.kids, children...)
		n.Children = a.kids[k:len(a.kids):len(a.kids)]
	}
	return n
}

// group derives the parts of one "and" group, left-associated.
func (a *arena) group(parts []Part) *data.Tree {
	d := partTree(parts[0])
	for _, p := range parts[1:] {
		d = a.node(RuleAnd, d, partTree(p))
	}
	return d
}

// part derives one phrase P.
func (a *arena) part(p Part) *data.Tree {
	var q *data.Tree
	if p.Form == Bare {
		q = a.node(RuleQA, a.node(ruleAction[p.Verb]))
	} else {
		var v *data.Tree
		if p.Verb == Turn {
			v = a.node(RuleTurn)
		} else {
			v = a.node(RuleVA, a.node(ruleAction[p.Verb]))
		}
		rule := RuleQL
		if p.Dir == Right {
			rule = RuleQR
		}
		q = a.node(rule, a.node(ruleDir[p.Dir][p.Form], v))
	}
	return a.node(ruleTimes[p.Times], q)
}
