package structure

import (
	"fmt"
	"slices"
	"strings"

	"compbench/data"
	"compbench/data/cfq"
)

// ParseSPARQL reads a CFQ query (Keysers et al. 2020, §3: SPARQL over
// Freebase, raw as in dataset.json or preprocessed as in CFQ's MCD
// releases) as a tree of its query graph, linked by variable. It is the
// tree of CFQ data that carries no rule trees: Keysers et al. take atoms
// and compounds from the generator's rule tree (§2.1, App. L.4), which
// CFQ's text releases drop, so divergences over this tree are not theirs.
//
// Variables (?x0, ?x1, ...) are nodes, written ?x (their numbers carry
// no meaning). A triple "s p o" is an edge from s's node to o's through a
// node labelled p; seen from o, the edge is labelled ^p. FILTER ( a != b )
// is an edge labelled != either way. Constants are leaves wherever they
// occur: entity placeholders written M (CFQ numbers them in order of
// mention), Freebase ids and classes under their names, since they are
// words of the question (m_05zppz is "male", film.film "film"); so only
// variables join a query's parts, as in the question. The root is the
// query form, count (a yes/no question, "SELECT count ( * )"), distinct
// ("SELECT DISTINCT ?x0") or select, above the graph spanned from the
// selected variable, else ?x0, else the first triple's subject; a
// variable reached a second time is a leaf, and a part of the graph not
// reached from there is spanned from its first subject (a constant then
// heads it), as another child of the root. A node's several children
// are sorted by their text (the triples of a query are a set) and chained
// as and(c1, and(c2, ... and(ck-1, ck))).
//
// Why linked rather than one node per triple under a flat root: CFQ's
// questions compose by chaining relations through variables ("M0 's
// director 's spouse": ?x0 spouse ?x1 . ?x1 director M0), and a flat root
// reduces a query to a bag of triples whose compounds never show the
// chain; linked, spouse(?x(director(M))) is a compound. Why the and
// chains: compounds name a node's argument slots by position (Keysers et
// al.'s rule nodes have a fixed number), so a node with one child per
// relation would make every compound through it specific to how many
// relations the variable has and where each sorts; chained, and(edit(M),
// and(produce(M), _)) is shared by every query that edits and produces.
// On 2,000 / 500 examples of CFQ's MCD1, one child per relation also took
// twice the memory.
//
// The question
//
//	Did M1 's female actor edit and produce M0
//
// has the query
//
//	SELECT count ( * ) WHERE { ?x0 film.actor.film/ns:film.performance.character M1 .
//	  ?x0 film.editor.film M0 . ?x0 film.producer.film|ns:film.production_company.films M0 .
//	  ?x0 people.person.gender m_02zsn }
//
// and reads, A and P standing for the two property paths,
// count(?x(and(A(M), and(film.editor.film(M), and(P(M),
// people.person.gender(m_02zsn)))))).
func ParseSPARQL(s string) (*data.Tree, error) {
	toks := strings.Fields(cfq.PreprocessSPARQL(s))
	p := &sparqlParser{toks: toks}
	head, err := p.head()
	if err != nil {
		return nil, err
	}
	if err := p.constraints(); err != nil {
		return nil, err
	}
	if len(p.triples) == 0 {
		return nil, fmt.Errorf("query has no triple patterns")
	}
	return p.tree(head)
}

// sparqlTriple is one constraint: subject, predicate, object as written.
type sparqlTriple struct{ s, p, o string }

type sparqlParser struct {
	toks    []string
	i       int
	focus   string // the SELECTed variable, if any
	triples []sparqlTriple
	used    []bool
	placed  map[string]bool
	touch   map[string][]int // term -> the constraints it is in, in order
	depth   int
}

// errorf names token at (0-based), or the end of the query.
func (p *sparqlParser) errorf(at int, format string, a ...any) error {
	if at >= len(p.toks) {
		return fmt.Errorf("at the end of the query: "+format, a...)
	}
	return fmt.Errorf("token %d %q: "+format, append([]any{at + 1, p.toks[at]}, a...)...)
}

// take returns the next n tokens ("" past the end) and moves past them.
func (p *sparqlParser) take(n int) []string {
	out := make([]string, n)
	for k := range out {
		if p.i+k < len(p.toks) {
			out[k] = p.toks[p.i+k]
		}
	}
	p.i += n
	return out
}

// expect moves past tok or names what was found instead.
func (p *sparqlParser) expect(tok, what string) error {
	if p.take(1)[0] != tok {
		return p.errorf(p.i-1, "expected %s", what)
	}
	return nil
}

// head reads "SELECT count ( * ) WHERE {" or "SELECT [DISTINCT] ?v WHERE {"
// and returns the root's label.
func (p *sparqlParser) head() (string, error) {
	if err := p.expect("SELECT", "SELECT"); err != nil {
		return "", err
	}
	at := p.i
	if slices.Equal(p.take(4), []string{"count", "(", "*", ")"}) {
		return "count", p.where()
	}
	p.i = at
	label := "select"
	if at < len(p.toks) && p.toks[at] == "DISTINCT" {
		p.i++
		label = "distinct"
	}
	if p.focus = p.take(1)[0]; !strings.HasPrefix(p.focus, "?") {
		return "", p.errorf(p.i-1, "expected count ( * ) or a variable after SELECT")
	}
	return label, p.where()
}

// where reads "WHERE {".
func (p *sparqlParser) where() error {
	if err := p.expect("WHERE", "WHERE"); err != nil {
		return err
	}
	return p.expect("{", "{")
}

// constraints reads "s p o" triples and FILTER ( a != b ) separated by
// "." up to the closing "}", which must end the query.
func (p *sparqlParser) constraints() error {
	for {
		at := p.i
		switch t := p.take(1)[0]; t {
		case "":
			return p.errorf(at, "expected }")
		case "}":
			if p.i < len(p.toks) {
				return p.errorf(p.i, "data after the closing }")
			}
			return nil
		case "FILTER":
			f := p.take(5)
			if f[0] != "(" || f[4] != ")" || f[2] != "!=" || !isTerm(f[1]) || !isTerm(f[3]) {
				return p.errorf(at, "expected FILTER ( a != b )")
			}
			p.triples = append(p.triples, sparqlTriple{f[1], "!=", f[3]})
		default:
			p.i = at
			f := p.take(3)
			if !isTerm(f[0]) || !isTerm(f[1]) || !isTerm(f[2]) {
				return p.errorf(at, "expected a triple subject predicate object")
			}
			p.triples = append(p.triples, sparqlTriple{f[0], f[1], f[2]})
		}
		switch p.take(1)[0] {
		case ".":
		case "}":
			p.i--
		default:
			return p.errorf(p.i-1, "expected . or } after a constraint")
		}
	}
}

// isTerm reports whether t can be a subject, predicate or object: not
// empty and not one of the query's punctuation.
func isTerm(t string) bool {
	switch t {
	case "", ".", "{", "}", "(", ")", "FILTER", "!=":
		return false
	}
	return true
}

// normTerm writes variables as ?x and entity placeholders as M.
func normTerm(t string) string {
	if strings.HasPrefix(t, "?") {
		return "?x"
	}
	if len(t) > 1 && t[0] == 'M' && strings.Trim(t[1:], "0123456789") == "" {
		return "M"
	}
	return t
}

func (p *sparqlParser) tree(head string) (*data.Tree, error) {
	p.used = make([]bool, len(p.triples))
	p.placed = map[string]bool{}
	p.touch = map[string][]int{}
	for k, t := range p.triples {
		p.touch[t.s] = append(p.touch[t.s], k)
		if t.o != t.s {
			p.touch[t.o] = append(p.touch[t.o], k)
		}
	}
	focus := p.triples[0].s
	for _, v := range []string{p.focus, "?x0"} {
		if p.touch[v] != nil {
			focus = v
			break
		}
	}
	root := &data.Tree{Label: head}
	for k := 0; ; {
		n, err := p.span(focus, true)
		if err != nil {
			return nil, err
		}
		root.Children = append(root.Children, n)
		for k < len(p.used) && p.used[k] {
			k++
		}
		if k == len(p.used) {
			break
		}
		focus = p.triples[k].s
	}
	conjoin(root)
	return root, nil
}

// span builds term's node: a leaf for a constant (unless it is a part's
// focus) or a variable seen before, else one child per unused constraint
// touching it, the constraint's predicate above the other term's node.
func (p *sparqlParser) span(term string, focus bool) (*data.Tree, error) {
	n := &data.Tree{Label: normTerm(term)}
	if p.placed[term] || !focus && !strings.HasPrefix(term, "?") {
		return n, nil
	}
	p.placed[term] = true
	if p.depth++; p.depth > maxDepth {
		return nil, fmt.Errorf("query graph deeper than %d", maxDepth)
	}
	defer func() { p.depth-- }()
	for _, k := range p.touch[term] {
		if p.used[k] {
			continue
		}
		p.used[k] = true
		t := p.triples[k]
		label, other := t.p, t.o
		if t.s != term {
			other = t.s
			if t.p != "!=" {
				label = "^" + t.p
			}
		}
		c, err := p.span(other, false)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, &data.Tree{Label: label, Children: []*data.Tree{c}})
	}
	conjoin(n)
	return n, nil
}

// conjoin sorts n's children by their text (their own children are done
// already) and, when there are several, chains them under n as
// and(c1, and(c2, ... and(ck-1, ck))), so that every node has a fixed
// number of children (see ParseSPARQL).
func conjoin(n *data.Tree) {
	k := len(n.Children)
	if k < 2 {
		return
	}
	text := make(map[*data.Tree]string, k)
	for _, c := range n.Children {
		text[c] = c.String()
	}
	slices.SortStableFunc(n.Children, func(a, b *data.Tree) int { return strings.Compare(text[a], text[b]) })
	chain := n.Children[k-1]
	for i := k - 2; i >= 0; i-- {
		chain = &data.Tree{Label: "and", Children: []*data.Tree{n.Children[i], chain}}
	}
	n.Children = []*data.Tree{chain}
}
