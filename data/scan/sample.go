package scan

import "math/rand/v2"

// PartSpec restricts the phrases the sampler may draw for one part. The
// sampler follows Shi et al.'s generator: a form (template) uniformly from
// Forms; for Bare an action uniformly from the four actions, otherwise a verb
// uniformly from the four actions and "turn" and a direction uniformly from
// Dirs; then "twice" or "thrice" (equally likely) with probability 0.5.
type PartSpec struct {
	// Forms are the allowed templates; empty means all four.
	Forms []Form
	// Dirs are the allowed directions for forms with one; empty means both.
	Dirs []Dir
}

// Any allows every phrase.
var Any = PartSpec{}

// Sample draws one phrase.
func (s PartSpec) Sample(rng *rand.Rand) Part {
	forms := s.Forms
	if len(forms) == 0 {
		forms = Forms
	}
	p := Part{Form: forms[rng.IntN(len(forms))], Times: 1}
	if p.Form == Bare {
		p.Verb = Actions[rng.IntN(len(Actions))]
	} else {
		p.Verb = Verbs[rng.IntN(len(Verbs))]
		dirs := s.Dirs
		if len(dirs) == 0 {
			dirs = Dirs
		}
		p.Dir = dirs[rng.IntN(len(dirs))]
	}
	if rng.IntN(2) == 0 {
		p.Times = 2 + rng.IntN(2)
	}
	return p
}

// Sample draws a command of len(specs) parts joined by conjunctions drawn
// uniformly from "and" and "after". specs[k] constrains the k-th part in
// OUTPUT order (the program's k-th part, §3), which is what the concept-order
// task needs; the conjunctions are drawn first to know that order. When all
// specs are equal the order does not matter. specs must not be empty.
func Sample(rng *rand.Rand, specs []PartSpec) Command {
	n := len(specs)
	c := Command{Parts: make([]Part, n), Conjs: make([]Conj, n-1)}
	for i := range c.Conjs {
		c.Conjs[i] = Conj(rng.IntN(2))
	}
	var buf [16]int
	for k, pos := range outputOrder(c.Conjs, buf[:0]) {
		c.Parts[pos] = specs[k].Sample(rng)
	}
	return c
}
