package structure

import (
	"fmt"
	"strings"

	"compbench/data"
)

// token is one lexical unit of a bracketed program: a name or one of ( ) , [ ].
type token struct {
	text  string
	punct bool
	pos   int // byte offset, for messages
}

// lex splits s on whitespace and the punctuation ( ) , [ ]. A quoted string
// ('new york' or "new york") is one name, quotes kept, so GeoQuery-style
// literals with spaces stay one symbol.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("(),[]", c) >= 0:
			toks = append(toks, token{text: s[i : i+1], punct: true, pos: i})
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated quote at byte %d", i)
			}
			toks = append(toks, token{text: s[i : i+j+2], pos: i})
			i += j + 2
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t\n\r(),[]'\"", s[j]) < 0 {
				j++
			}
			toks = append(toks, token{text: s[i:j], pos: i})
			i = j
		}
	}
	return toks, nil
}

type parser struct {
	toks []token
	i    int
	src  string
}

func (p *parser) peek() (token, bool) {
	if p.i >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.i], true
}

func (p *parser) errorf(format string, a ...any) error {
	where := "end of input"
	if t, ok := p.peek(); ok {
		where = fmt.Sprintf("%q at byte %d", t.text, t.pos)
	}
	return fmt.Errorf("%s: %s", fmt.Sprintf(format, a...), where)
}

func (p *parser) is(text string) bool {
	t, ok := p.peek()
	return ok && t.punct && t.text == text
}

// name reads a symbol and folds a following "[ x ]" into it: COVR writes
// query_attr[color] as "query_attr [ color ]", and Bogin et al. treat the
// whole as one symbol (see their tokenization), so both spellings give the
// label "query_attr[color]".
func (p *parser) name() (string, error) {
	t, ok := p.peek()
	if !ok || t.punct {
		return "", p.errorf("expected a symbol")
	}
	p.i++
	label := t.text
	if !p.is("[") {
		return label, nil
	}
	p.i++
	var inner []string
	for !p.is("]") {
		t, ok := p.peek()
		if !ok || t.punct {
			return "", p.errorf("expected a symbol or ] inside [ ]")
		}
		inner = append(inner, t.text)
		p.i++
	}
	p.i++
	if len(inner) == 0 {
		return "", p.errorf("empty [ ] after %q", label)
	}
	return label + "[" + strings.Join(inner, " ") + "]", nil
}

// ParseBracketed parses a program written f(a, b) or f ( a , b ): each
// symbol followed by a parenthesized, comma-separated argument list is a node
// with those children; f() is a node without children.
func ParseBracketed(s string) (*data.Tree, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty program")
	}
	p := &parser{toks: toks, src: s}
	t, err := p.bracketed(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, p.errorf("unexpected text after the program")
	}
	return t, nil
}

func (p *parser) bracketed(depth int) (*data.Tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	label, err := p.name()
	if err != nil {
		return nil, err
	}
	n := &data.Tree{Label: label}
	if !p.is("(") {
		return n, nil
	}
	p.i++
	if p.is(")") {
		p.i++
		return n, nil
	}
	for {
		c, err := p.bracketed(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
		switch {
		case p.is(","):
			p.i++
		case p.is(")"):
			p.i++
			return n, nil
		default:
			return nil, p.errorf("expected , or )")
		}
	}
}

// ParseSExpr parses an s-expression program ( f a b ): a parenthesized list
// is a node labelled by its first symbol with the rest as children; a bare
// symbol is a leaf. The head must be a symbol ("( ( f ) a )" is an error).
func ParseSExpr(s string) (*data.Tree, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty program")
	}
	p := &parser{toks: toks, src: s}
	t, err := p.sexpr(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, p.errorf("unexpected text after the program")
	}
	return t, nil
}

func (p *parser) sexpr(depth int) (*data.Tree, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	if !p.is("(") {
		label, err := p.name()
		if err != nil {
			return nil, err
		}
		return &data.Tree{Label: label}, nil
	}
	p.i++
	head, err := p.name()
	if err != nil {
		return nil, err
	}
	n := &data.Tree{Label: head}
	for !p.is(")") {
		if _, ok := p.peek(); !ok {
			return nil, p.errorf("missing )")
		}
		c, err := p.sexpr(depth + 1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	p.i++
	return n, nil
}

// FormatBracketed writes t as f(a, b); ParseBracketed reads it back.
func FormatBracketed(t *data.Tree) string {
	var b strings.Builder
	var w func(*data.Tree)
	w = func(t *data.Tree) {
		b.WriteString(t.Label)
		if len(t.Children) == 0 {
			return
		}
		b.WriteByte('(')
		for i, c := range t.Children {
			if i > 0 {
				b.WriteString(", ")
			}
			w(c)
		}
		b.WriteByte(')')
	}
	w(t)
	return b.String()
}
