package scan

import (
	"fmt"

	"compbench/data"
)

// Keysers et al. (2020, §5.3) measure original SCAN by "the original grammar
// while tracking the rule applications", 38 rules in all: Lake & Baroni's 18
// phrase-structure rules (their Fig. 6) and the 20 rules of its
// interpretation function. These are the atoms of original SCAN; the tree
// RuleTree builds from them is the example's rule-application structure,
// whose subgraphs are the compounds (§2.1).
//
// Grammar rules are written "LHS := RHS" (as Shi et al.'s rules are; JSON
// writers escape "->"), interpretation rules as the function's left-hand
// side, "[[u opposite left]]". L&B write V := D[1] opposite D[2]; the two
// D's are one D's verb and direction ("jump opposite left" is U = jump, D =
// "jump left"), so the rule has one child D here.
const (
	RuleCAnd   = "C := S and S"
	RuleCAfter = "C := S after S"
	RuleCS     = "C := S"
	RuleSTwice = "S := V twice"
	RuleSThr   = "S := V thrice"
	RuleSV     = "S := V"
	RuleVOpp   = "V := D opposite D"
	RuleVAro   = "V := D around D"
	RuleVD     = "V := D"
	RuleVU     = "V := U"

	InterpTwice  = "[[x twice]]"
	InterpThrice = "[[x thrice]]"
	InterpAnd    = "[[x1 and x2]]"
	InterpAfter  = "[[x1 after x2]]"
)

// OriginalRules lists the 38 rules of original SCAN: the 18 grammar rules,
// then the 20 interpretation rules, in Lake & Baroni's order.
var OriginalRules = originalRules()

func originalRules() []string {
	r := []string{RuleCAnd, RuleCAfter, RuleCS, RuleSTwice, RuleSThr, RuleSV, RuleVOpp, RuleVAro, RuleVD, RuleVU}
	for _, d := range Dirs {
		r = append(r, "D := U "+d.String())
	}
	for _, d := range Dirs {
		r = append(r, "D := turn "+d.String())
	}
	for _, v := range Actions {
		r = append(r, "U := "+v.String())
	}
	for _, v := range Actions {
		r = append(r, interpWord(v.String()))
	}
	for _, form := range []string{"", "opposite ", "around "} {
		for _, subj := range []string{"turn", "u"} {
			for _, d := range Dirs {
				r = append(r, interpWord(subj+" "+form+d.String()))
			}
		}
	}
	return append(r, InterpTwice, InterpThrice, InterpAnd, InterpAfter)
}

func interpWord(s string) string { return "[[" + s + "]]" }

// IsOriginal reports whether c is a command of the original SCAN grammar:
// one phrase, or two joined by "and" or "after".
func (c *Command) IsOriginal() bool {
	if len(c.Parts) == 0 || len(c.Parts) > 2 || len(c.Conjs) != len(c.Parts)-1 {
		return false
	}
	for _, p := range c.Parts {
		if !p.Valid() {
			return false
		}
	}
	return true
}

// RuleTree returns the rule applications that generate the original SCAN
// command c and its translation, as Keysers et al. count them (§5.3).
//
// Structure (the decision, after §3 and App. K-L): generation is
// top-down; a constituent's grammar rule is applied, then the
// interpretation rule that gives its meaning, then the rules of its
// sub-constituents. Each application depends on the one before it on that
// path, so the transitive reduction of the dependency DAG is a tree in
// which an interpretation rule sits between its grammar rule and the
// sub-derivations it combines:
//
//	jump twice and walk left:
//	C := S and S ( [[x1 and x2]] ( S := V twice ( [[x twice]] ( V := U ( U := jump ( [[jump]] ) ) ) ),
//	                              S := V ( V := D ( D := U left ( [[u left]] ( U := walk ( [[walk]] ) ) ) ) ) ) )
//
// Unary rules with the identity as meaning (C := S, S := V, V := D, V := U)
// have no interpretation rule. A D inside "opposite" or "around" takes no
// meaning of its own: [[u opposite left]] is defined on the whole phrase.
// Of the readings tried on Keysers et al.'s published MCD1 split of SCAN
// (docs/splits.md), this one reproduces Table 3's compound divergences best.
func (c *Command) RuleTree() (*data.Tree, error) {
	if !c.IsOriginal() {
		return nil, fmt.Errorf("%q is not a command of the original SCAN grammar (one phrase, or two joined by and/after)", c.Text())
	}
	first := phraseRules(c.Parts[0])
	if len(c.Parts) == 1 {
		return ruleNode(RuleCS, first), nil
	}
	second := phraseRules(c.Parts[1])
	if c.Conjs[0] == After {
		return ruleNode(RuleCAfter, ruleNode(InterpAfter, first, second)), nil
	}
	return ruleNode(RuleCAnd, ruleNode(InterpAnd, first, second)), nil
}

func ruleNode(label string, children ...*data.Tree) *data.Tree {
	return &data.Tree{Label: label, Children: children}
}

// phraseRules derives one phrase S of the original grammar.
func phraseRules(p Part) *data.Tree {
	var v *data.Tree
	dir := p.Dir.String()
	if p.Form == Bare {
		v = ruleNode(RuleVU, verbRules(p.Verb))
	} else {
		var d *data.Tree // D := U dir | turn dir, with its meaning when plain
		plain := p.Form == Plain
		if p.Verb == Turn {
			d = ruleNode("D := turn " + dir)
			if plain {
				d.Children = []*data.Tree{ruleNode(interpWord("turn " + dir))}
			}
		} else {
			u := verbRules(p.Verb)
			if plain {
				u = ruleNode(interpWord("u "+dir), u)
			}
			d = ruleNode("D := U "+dir, u)
		}
		subj := "u "
		if p.Verb == Turn {
			subj = "turn "
		}
		switch p.Form {
		case Plain:
			v = ruleNode(RuleVD, d)
		case Opposite:
			v = ruleNode(RuleVOpp, ruleNode(interpWord(subj+"opposite "+dir), d))
		case Around:
			v = ruleNode(RuleVAro, ruleNode(interpWord(subj+"around "+dir), d))
		}
	}
	switch p.Times {
	case 2:
		return ruleNode(RuleSTwice, ruleNode(InterpTwice, v))
	case 3:
		return ruleNode(RuleSThr, ruleNode(InterpThrice, v))
	}
	return ruleNode(RuleSV, v)
}

// verbRules derives U := verb with its meaning.
func verbRules(v Verb) *data.Tree {
	return ruleNode("U := "+v.String(), ruleNode(interpWord(v.String())))
}

// TextRecord is c's record as SCAN's text files and gen scan-original give
// it: the tree is the rule-application tree (RuleTree) for a command of
// the original grammar, which Keysers et al. measure, and Shi et al.'s
// derivation for a longer one (a file of their extended grammar written as
// text).
func (c *Command) TextRecord() data.Record {
	rec := c.Record()
	if t, err := c.RuleTree(); err == nil {
		rec.Tree = t
	}
	return rec
}
