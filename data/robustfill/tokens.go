package robustfill

//lint:file-ignore ST1005 error messages start with the DSL operator they concern (Compose, SubStr, ...), whose names are capitalized

import (
	"fmt"
	"strconv"
	"strings"
)

// Token scheme (the record's output): one token per operation name, type,
// case, boundary and integer, and one per delimiter or character, written
// 'c' in single quotes (''' is the quote character itself), except the
// space, which is SPACE; no DSL token contains white space. An expression is its
// operation followed by its arguments in Fig. 3 order; Compose is followed by
// its modification's tokens, then its inner expression's. Expressions are
// separated by the token |. Example:
//
//	GetToken ALPHANUM 3 | GetFrom ':' | GetFirst CHAR 4
//
// Quoting keeps characters apart from integers and names in the vocabulary
// (the character '1' is not the index 1) while the parser stays positional.

// Separator is the token between two expressions.
const Separator = "|"

// SpaceToken is the token of the space character.
const SpaceToken = "SPACE"

// Tokens returns the program's tokens joined by single spaces, expressions
// separated by " | ".
func (p Program) Tokens() string {
	var b []byte
	for i := range p {
		if i > 0 {
			b = append(b, " | "...)
		}
		b = p[i].appendTokens(b)
	}
	return string(b)
}

// Parts returns one token string per expression, in program order.
func (p Program) Parts() []string {
	parts := make([]string, len(p))
	for i := range p {
		parts[i] = string(p[i].appendTokens(nil))
	}
	return parts
}

func appendChar(b []byte, c byte) []byte {
	if c == ' ' {
		return append(b, SpaceToken...)
	}
	return append(b, '\'', c, '\'')
}

func (e *Expr) appendTokens(b []byte) []byte {
	b = append(b, e.Op.String()...)
	if e.Op == Compose {
		b = append(b, ' ')
		b = e.Mod.appendTokens(b)
		b = append(b, ' ')
		b = e.Arg.appendTokens(b)
	}
	for _, a := range e.args() {
		b = append(b, ' ')
		switch a := a.(type) {
		case *int:
			b = strconv.AppendInt(b, int64(*a), 10)
		case *Type:
			b = append(b, a.String()...)
		case *Regex:
			if a.Type != TypeInvalid {
				b = append(b, a.Type.String()...)
			} else {
				b = appendChar(b, a.Delim)
			}
		case *Boundary:
			b = append(b, a.String()...)
		case *Case:
			b = append(b, a.String()...)
		case *byte:
			b = appendChar(b, *a)
		}
	}
	return b
}

// ParseTokens parses a token sequence (as in a record's output, or a model's
// prediction) into a valid program. Tokens may be separated by any white
// space. The separator | between expressions is optional, so predictions
// from a model trained without separators parse too, but it may not lead,
// trail or repeat.
func ParseTokens(s string) (Program, error) {
	toks := strings.Fields(s)
	if len(toks) == 0 {
		return nil, fmt.Errorf("tokens: empty program")
	}
	tp := tokenParser{toks: toks}
	var p Program
	for tp.pos < len(toks) {
		if len(p) > 0 && toks[tp.pos] == Separator {
			tp.pos++
			if tp.pos == len(toks) {
				return nil, fmt.Errorf("tokens: program ends with %q", Separator)
			}
		}
		var e Expr
		if err := tp.expr(&e); err != nil {
			return nil, fmt.Errorf("tokens: expression %d: %w", len(p)+1, err)
		}
		p = append(p, e)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	return p, nil
}

type tokenParser struct {
	toks []string
	pos  int
}

func (tp *tokenParser) next() (string, error) {
	if tp.pos >= len(tp.toks) {
		return "", fmt.Errorf("unexpected end of tokens")
	}
	t := tp.toks[tp.pos]
	tp.pos++
	return t, nil
}

func (tp *tokenParser) expr(e *Expr) error {
	at := tp.pos + 1
	name, err := tp.next()
	if err != nil {
		return err
	}
	op, ok := parseOp(name)
	if !ok {
		return fmt.Errorf("token %d: want an operation, got %q", at, name)
	}
	e.Op = op
	if op == Compose {
		e.Mod, e.Arg = new(Expr), new(Expr)
		if err := tp.expr(e.Mod); err != nil {
			return fmt.Errorf("Compose: modification: %w", err)
		}
		if err := tp.expr(e.Arg); err != nil {
			return fmt.Errorf("Compose: inner: %w", err)
		}
		return nil
	}
	for j, a := range e.args() {
		at := tp.pos + 1
		t, err := tp.next()
		if err != nil {
			return fmt.Errorf("%v: argument %d: %w", op, j+1, err)
		}
		if !parseArgToken(t, a) {
			return fmt.Errorf("%v: token %d: invalid value %q for %s", op, at, t, argKindName(a))
		}
	}
	return nil
}

// parseChar reads a character token: 'c' or SPACE.
func parseChar(t string) (byte, bool) {
	if t == SpaceToken {
		return ' ', true
	}
	if len(t) == 3 && t[0] == '\'' && t[2] == '\'' && t[1] != ' ' {
		return t[1], true
	}
	return 0, false
}

func parseArgToken(t string, a any) bool {
	var ok bool
	switch a := a.(type) {
	case *int:
		v, err := strconv.Atoi(t)
		if err != nil || strconv.Itoa(v) != t { // canonical form only: no "+3", "03"
			return false
		}
		*a, ok = v, true
	case *Type:
		*a, ok = parseType(t)
	case *Regex:
		if ty, isType := parseType(t); isType {
			*a, ok = TypeRegex(ty), true
		} else if c, isChar := parseChar(t); isChar && isDelim[c] {
			*a, ok = DelimRegex(c), true
		}
	case *Boundary:
		*a, ok = parseBoundary(t)
	case *Case:
		*a, ok = parseCase(t)
	case *byte:
		*a, ok = parseChar(t)
	}
	return ok
}
