package scan

import (
	"strings"

	"compbench/data"
)

// Words returns the phrase as written in a command ("jump around left
// twice"); "" if p is not Valid.
func (p Part) Words() string { return p.text().words }

// Actions returns the phrase's translation (Fig. 2) as space-separated
// action names: "x dir" = TURN x, "x opposite dir" = TURN TURN x,
// "x around dir" = (TURN x) four times, "turn" contributes no action, and
// twice/thrice repeat the whole phrase Q. It is "" if p is not Valid.
func (p Part) Actions() string { return p.text().actions }

// Len is the number of actions in the phrase's translation.
func (p Part) Len() int { return p.text().n }

// index numbers the parts for the lookup tables; -1 if p is not Valid.
func (p Part) index() int {
	if !p.Valid() {
		return -1
	}
	return ((int(p.Verb)*4+int(p.Form))*3+int(p.Dir))*3 + p.Times - 1
}

func (p Part) text() partText {
	if i := p.index(); i >= 0 {
		return partTable[i]
	}
	return partText{}
}

type partText struct {
	words, actions string
	n              int
}

// partTable holds the text of every part: commands are translated by table
// look-up, which keeps generation fast. Invalid slots stay empty.
var partTable = buildPartTable()

func buildPartTable() []partText {
	t := make([]partText, 5*4*3*3)
	for _, v := range Verbs {
		for _, f := range Forms {
			for _, d := range []Dir{NoDir, Left, Right} {
				for times := 1; times <= 3; times++ {
					p := Part{Verb: v, Form: f, Dir: d, Times: times}
					if !p.Valid() {
						continue
					}
					acts := p.translate()
					t[p.index()] = partText{words: p.words(), actions: strings.Join(acts, " "), n: len(acts)}
				}
			}
		}
	}
	return t
}

func (p Part) words() string {
	w := []string{p.Verb.String()}
	switch p.Form {
	case Plain:
		w = append(w, p.Dir.String())
	case Opposite:
		w = append(w, "opposite", p.Dir.String())
	case Around:
		w = append(w, "around", p.Dir.String())
	}
	switch p.Times {
	case 2:
		w = append(w, "twice")
	case 3:
		w = append(w, "thrice")
	}
	return strings.Join(w, " ")
}

// translate applies the rules of Fig. 2 to one phrase.
func (p Part) translate() []string {
	var q []string // the translation of Q
	act := verbActions[p.Verb]
	turn := dirTurns[p.Dir]
	step := func(turns int) {
		for i := 0; i < turns; i++ {
			q = append(q, turn)
		}
		if act != "" {
			q = append(q, act)
		}
	}
	switch p.Form {
	case Bare:
		step(0)
	case Plain:
		step(1)
	case Opposite:
		step(2)
	case Around:
		for i := 0; i < 4; i++ {
			step(1)
		}
	}
	var out []string
	for i := 0; i < p.Times; i++ {
		out = append(out, q...)
	}
	return out
}

// Text returns the command as written: parts joined by their conjunctions.
func (c *Command) Text() string {
	var b strings.Builder
	for i, p := range c.Parts {
		if i > 0 {
			b.WriteByte(' ')
			b.WriteString(c.Conjs[i-1].String())
			b.WriteByte(' ')
		}
		b.WriteString(p.Words())
	}
	return b.String()
}

// Output returns the translation of the command: the parts' actions in
// output order, space-separated.
func (c *Command) Output() string {
	out, _ := c.outputAndParts()
	return out
}

// OutputParts returns the program parts (§3): each phrase P's actions, in
// output order.
func (c *Command) OutputParts() []string {
	_, parts := c.outputAndParts()
	return parts
}

// outputAndParts builds the output once; the parts are substrings of it.
func (c *Command) outputAndParts() (string, []string) {
	var order [16]int
	ord := outputOrder(c.Conjs, order[:0])
	size := len(ord) - 1
	for _, k := range ord {
		size += len(c.Parts[k].Actions())
	}
	var b strings.Builder
	b.Grow(size)
	bounds := make([]int, 0, 2*len(ord))
	for i, k := range ord {
		if i > 0 {
			b.WriteByte(' ')
		}
		bounds = append(bounds, b.Len())
		b.WriteString(c.Parts[k].Actions())
		bounds = append(bounds, b.Len())
	}
	out := b.String()
	parts := make([]string, len(ord))
	for i := range parts {
		parts[i] = out[bounds[2*i]:bounds[2*i+1]]
	}
	return out, parts
}

// OutputLen is the number of actions in the translation.
func (c *Command) OutputLen() int {
	n := 0
	for _, p := range c.Parts {
		n += p.Len()
	}
	return n
}

// Record returns the command as a record without an ID: input, output,
// parts (output order) and derivation tree. The command must be valid, as
// Parse and Sample make them.
func (c *Command) Record() data.Record {
	out, parts := c.outputAndParts()
	return data.Record{Input: c.Text(), Output: out, Parts: parts, Tree: c.Tree()}
}
