package structure

import (
	"fmt"
	"strconv"
	"strings"

	"compbench/data"
)

// ParseCOGS reads a COGS logical form (Kim & Linzen 2020, §2) as a tree
// linked by variable. COGS writes a sentence's meaning as conjuncts over
// variables x _ N (N the word's position): "* sailor ( x _ 1 ) ; dust .
// agent ( x _ 2 , x _ 1 ) AND dust . theme ( x _ 2 , x _ 4 ) AND boy ( x _
// 4 )". Each variable becomes one node labelled by its word: the unary
// predicate over it (sailor, boy) or the first part of the binary
// predicates it heads (dust for dust . agent). A binary predicate
// P . R ( u , v ) is an edge from u's node to v's, through a node labelled
// by the relation R (agent, theme, recipient, nmod . in as "nmod.in",
// ccomp, xcomp); a proper name is a leaf. A definite description
// ("* sailor") puts a node "*" above its noun. The root is the variable no
// predicate takes as its second argument (the main verb's event); several
// such become children of a root "AND". The example reads
// dust(agent(*(sailor)), theme(boy)).
//
// Why link by variable rather than keep one node per conjunct with its
// variables as a symbol x: COGS's generalization cases move a word into a
// role or a depth it never had in training (a subject noun as object, a PP
// inside another PP, a clause inside another clause), and which word fills
// which role of which verb is carried only by the shared variable. One
// node per conjunct under a flat root would reduce every example to a bag
// of predicates, with the same compounds (dust.agent(x, x), boy(x)) in any
// arrangement; linked, dust(agent(sailor)) and dust(theme(sailor)) are
// different compounds, and a CP or PP recursion is a deeper tree.
//
// A variable an earlier conjunct has already placed (the controller of an
// infinitive, "* boy ( x _ 1 ) ; need . agent ( x _ 2 , x _ 1 ) AND need .
// xcomp ( x _ 2 , x _ 4 ) AND crawl . agent ( x _ 4 , x _ 1 )") appears
// again as a leaf with its word only, so the tree stays as large as the
// logical form: need(agent(*(boy)), xcomp(crawl(agent(boy)))).
//
// Primitives: "LAMBDA a . LAMBDA e . inflate . theme ( e , a )" reads as
// its body, the lambda variables as nodes named by their letter
// (inflate(theme(a))); "LAMBDA a . ball ( a )" and a bare word ("Emma",
// "cat") are one node.
func ParseCOGS(s string) (*data.Tree, error) {
	p := &cogsParser{toks: cogsLex(s), lambda: map[string]bool{}, vars: map[string]*cogsVar{}}
	if len(p.toks) == 0 {
		return nil, fmt.Errorf("empty logical form")
	}
	for p.peek() == "LAMBDA" {
		p.i++
		v := p.next()
		if !isCOGSWord(v) || v == "x" {
			return nil, p.errorf("expected a variable after LAMBDA")
		}
		if p.next() != "." {
			return nil, p.errorf("expected . after LAMBDA %s", v)
		}
		p.lambda[v] = true
	}
	if p.i+1 == len(p.toks) && isCOGSWord(p.toks[p.i]) {
		return &data.Tree{Label: p.toks[p.i]}, nil // a primitive: one word
	}
	for {
		if err := p.item(); err != nil {
			return nil, err
		}
		if p.i == len(p.toks) {
			break
		}
		if sep := p.next(); sep != ";" && sep != "AND" {
			p.i--
			return nil, p.errorf("expected ; or AND between conjuncts")
		}
	}
	return p.tree()
}

// cogsVar is what the logical form says about one variable.
type cogsVar struct {
	name     string // "x _ 3" as x, a lambda variable as its letter
	head     string // its word; "" when no predicate names it
	definite bool
	edges    []cogsEdge
	used     bool // some predicate takes it as second argument
	placed   bool // the tree holds its node already
}

// cogsEdge is a binary predicate from its first argument: relation and
// second argument (a variable key, or a constant when constant is set).
type cogsEdge struct {
	rel, arg string
	constant bool
}

type cogsParser struct {
	toks   []string
	i      int
	lambda map[string]bool
	vars   map[string]*cogsVar
	order  []string // variable keys in order of first appearance
}

// cogsLex splits on whitespace and the punctuation ( ) , ; . * _, so
// "x _ 1" and "x_1", "cat ( x _ 1 )" and "cat(x_1)" read alike.
func cogsLex(s string) []string {
	var toks []string
	start := -1
	for i := 0; i <= len(s); i++ {
		var c byte = ' '
		if i < len(s) {
			c = s[i]
		}
		sep := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		punct := strings.IndexByte("(),;.*_", c) >= 0
		if (sep || punct) && start >= 0 {
			toks = append(toks, s[start:i])
			start = -1
		}
		switch {
		case punct:
			toks = append(toks, s[i:i+1])
		case !sep && start < 0:
			start = i
		}
	}
	return toks
}

// isCOGSWord reports whether t can name a predicate, variable or constant.
func isCOGSWord(t string) bool {
	return t != "" && t != "AND" && t != "LAMBDA" && !strings.ContainsAny(t, "(),;.*_")
}

func (p *cogsParser) peek() string {
	if p.i >= len(p.toks) {
		return ""
	}
	return p.toks[p.i]
}

// next returns the current token ("" past the end) and moves on; p.i-- undoes it.
func (p *cogsParser) next() string {
	t := p.peek()
	p.i++
	return t
}

func (p *cogsParser) errorf(format string, a ...any) error {
	where := "end of input"
	if p.i < len(p.toks) {
		where = fmt.Sprintf("%q (token %d)", p.toks[p.i], p.i+1)
	}
	return fmt.Errorf("%s: %s", fmt.Sprintf(format, a...), where)
}

// item reads one conjunct, [*] P(.R)* ( arg [, arg] ), into p.vars.
func (p *cogsParser) item() error {
	definite := p.peek() == "*"
	if definite {
		p.i++
	}
	name := []string{p.next()}
	if !isCOGSWord(name[0]) {
		p.i--
		return p.errorf("expected a predicate")
	}
	for p.peek() == "." {
		p.i++
		w := p.next()
		if !isCOGSWord(w) {
			p.i--
			return p.errorf("expected a word after . in predicate %s", strings.Join(name, "."))
		}
		name = append(name, w)
	}
	if p.next() != "(" {
		p.i--
		return p.errorf("expected ( after predicate %s", strings.Join(name, "."))
	}
	var args []cogsEdge // arg and constant only
	for {
		a, err := p.arg()
		if err != nil {
			return err
		}
		args = append(args, a)
		if t := p.next(); t == ")" {
			break
		} else if t != "," {
			p.i--
			return p.errorf("expected , or ) in the arguments of %s", strings.Join(name, "."))
		}
	}
	pred := strings.Join(name, ".")
	switch {
	case len(args) > 2:
		return fmt.Errorf("predicate %s has %d arguments: COGS's have 1 or 2", pred, len(args))
	case args[0].constant:
		return fmt.Errorf("predicate %s: first argument %s is not a variable", pred, args[0].arg)
	case len(args) == 2 && definite:
		return fmt.Errorf("definite * on the binary predicate %s", pred)
	case len(args) == 2 && len(name) < 2:
		return fmt.Errorf("binary predicate %s has no relation (want word . relation)", pred)
	}
	head := pred
	if len(args) == 2 {
		head = name[0]
	}
	u := p.vars[args[0].arg]
	if u.head != "" && u.head != head {
		return fmt.Errorf("variable %s is both %s and %s", cogsVarName(args[0].arg), u.head, head)
	}
	u.head = head
	u.definite = u.definite || definite
	if len(args) == 2 {
		u.edges = append(u.edges, cogsEdge{rel: strings.Join(name[1:], "."), arg: args[1].arg, constant: args[1].constant})
		if !args[1].constant {
			p.vars[args[1].arg].used = true
		}
	}
	return nil
}

// arg reads x _ N, a lambda variable or a constant, registering variables.
func (p *cogsParser) arg() (cogsEdge, error) {
	t := p.next()
	if !isCOGSWord(t) {
		p.i--
		return cogsEdge{}, p.errorf("expected an argument")
	}
	var key, name string
	switch {
	case t == "x" && p.peek() == "_":
		p.i++
		n := p.next()
		if _, err := strconv.ParseUint(n, 10, 32); err != nil {
			p.i--
			return cogsEdge{}, p.errorf("expected a number after x _")
		}
		key, name = "x_"+n, "x"
	case p.lambda[t]:
		key, name = "λ"+t, t
	default:
		return cogsEdge{arg: t, constant: true}, nil
	}
	if p.vars[key] == nil {
		p.vars[key] = &cogsVar{name: name}
		p.order = append(p.order, key)
	}
	return cogsEdge{arg: key}, nil
}

// tree links the variables from the root(s), depth first in the order of
// the logical form.
func (p *cogsParser) tree() (*data.Tree, error) {
	var roots []*data.Tree
	for _, k := range p.order {
		if !p.vars[k].used {
			t, err := p.node(k, 0)
			if err != nil {
				return nil, err
			}
			roots = append(roots, t)
		}
	}
	for _, k := range p.order {
		if !p.vars[k].placed {
			return nil, fmt.Errorf("variable %s is on a cycle of predicates", cogsVarName(k))
		}
	}
	if len(roots) == 1 {
		return roots[0], nil
	}
	return &data.Tree{Label: "AND", Children: roots}, nil
}

func (p *cogsParser) node(k string, depth int) (*data.Tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	v := p.vars[k]
	label := v.head
	if label == "" {
		label = v.name
	}
	if v.placed {
		return &data.Tree{Label: label}, nil
	}
	v.placed = true
	n := &data.Tree{Label: label}
	for _, e := range v.edges {
		var c *data.Tree
		if e.constant {
			c = &data.Tree{Label: e.arg}
		} else {
			var err error
			if c, err = p.node(e.arg, depth+1); err != nil {
				return nil, err
			}
		}
		n.Children = append(n.Children, &data.Tree{Label: e.rel, Children: []*data.Tree{c}})
	}
	if v.definite {
		return &data.Tree{Label: "*", Children: []*data.Tree{n}}, nil
	}
	return n, nil
}

// cogsVarName writes a variable key as the logical form does: x _ 3, a.
func cogsVarName(k string) string {
	if n, ok := strings.CutPrefix(k, "x_"); ok {
		return "x _ " + n
	}
	return strings.TrimPrefix(k, "λ")
}

// isCOGSForm reports whether s looks like a COGS logical form, for
// TreeAuto: a LAMBDA prefix or a variable x _ N.
func isCOGSForm(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "LAMBDA ") || strings.Contains(s, "x _ ")
}
