package eval

import (
	"fmt"
	"slices"
	"strings"
)

// Normalizer rewrites an output before exact match; gold and prediction
// go through the same normalizers, in the order given.
type Normalizer struct {
	// Name is the name used on the command line.
	Name string
	// Apply rewrites one output.
	Apply func(string) string
}

// NormalizerNames lists the normalizers, for flag help.
var NormalizerNames = []string{"sep", "whitespace", "sparql", "sorted-conjuncts", "ordered-filters"}

// DefaultSeparator is the token between program parts (Shi et al. §4.1;
// the RobustFill and SCAN token schemes both write "|").
const DefaultSeparator = "|"

// ParseNormalizers reads a comma-separated list such as "sep,whitespace".
// sep drops the separator token sep; an empty list means none.
func ParseNormalizers(list, sep string) ([]Normalizer, error) {
	var out []Normalizer
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		var f func(string) string
		switch name {
		case "":
			continue
		case "sep":
			f = func(s string) string { return dropToken(s, sep) }
		case "whitespace":
			f = collapseSpace
		case "sparql":
			f = NormalizeSPARQL
		case "sorted-conjuncts":
			f = SortConjuncts
		case "ordered-filters":
			f = OrderFilters
		default:
			return nil, fmt.Errorf("unknown normalizer %q (want some of %s)", name, strings.Join(NormalizerNames, ","))
		}
		out = append(out, Normalizer{Name: name, Apply: f})
	}
	return out, nil
}

// normalize applies ns in order.
func normalize(s string, ns []Normalizer) string {
	for _, n := range ns {
		s = n.Apply(s)
	}
	return s
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// dropToken removes every white-space-separated token equal to tok.
func dropToken(s, tok string) string {
	f := strings.Fields(s)
	out := f[:0]
	for _, t := range f {
		if t != tok {
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

// item is a token or a parenthesized group of items.
type item struct {
	tok  string
	kids []*item // non-nil for a group
}

func (it *item) group() bool { return it.kids != nil }

// lexProgram splits s on white space and around ( ) , so both f(a,b) and
// f ( a , b ) give the same tokens.
func lexProgram(s string) []string {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r':
			flush()
		case '(', ')', ',':
			flush()
			toks = append(toks, string(r))
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks
}

// groupItems nests tokens by parentheses; ok is false when they do not balance.
func groupItems(toks []string) (items []*item, ok bool) {
	stack := [][]*item{nil}
	for _, t := range toks {
		switch t {
		case "(":
			stack = append(stack, []*item{})
		case ")":
			if len(stack) == 1 {
				return nil, false
			}
			g := &item{tok: "(", kids: stack[len(stack)-1]}
			stack = stack[:len(stack)-1]
			stack[len(stack)-1] = append(stack[len(stack)-1], g)
		default:
			stack[len(stack)-1] = append(stack[len(stack)-1], &item{tok: t})
		}
	}
	if len(stack) != 1 {
		return nil, false
	}
	return stack[0], true
}

func render(items []*item) string {
	var b strings.Builder
	var walk func([]*item)
	walk = func(its []*item) {
		for _, it := range its {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			if it.group() {
				b.WriteString("(")
				walk(it.kids)
				b.WriteString(" )")
			} else {
				b.WriteString(it.tok)
			}
		}
	}
	walk(items)
	return b.String()
}

// splitTop splits items at top-level tokens for which sep is true.
func splitTop(items []*item, sep func(string) bool) (parts [][]*item, seps []string) {
	cur := []*item{}
	for _, it := range items {
		if !it.group() && sep(it.tok) {
			parts = append(parts, cur)
			seps = append(seps, it.tok)
			cur = []*item{}
			continue
		}
		cur = append(cur, it)
	}
	return append(parts, cur), seps
}

func joinParts(parts [][]*item, sep string) []*item {
	var out []*item
	for i, p := range parts {
		if i > 0 {
			out = append(out, &item{tok: sep})
		}
		out = append(out, p...)
	}
	return out
}

// sortParts orders parts by their rendering.
func sortParts(parts [][]*item) {
	slices.SortStableFunc(parts, func(a, b []*item) int { return strings.Compare(render(a), render(b)) })
}

func isComma(t string) bool { return t == "," }
func isOr(t string) bool    { return t == "or" || t == "||" }
func isAnd(t string) bool   { return t == "and" || t == "&&" }

// SortConjuncts orders the operands of and/or (Bogin et al. App. A.3):
// in prefix calls and(x, y) / or(x, y) the arguments are sorted; in infix
// sequences "a && b || c" the operands are sorted within each operator's
// level, with and binding tighter than or, so precedence is kept. Output
// that does not balance its parentheses is only white-space normalized.
func SortConjuncts(s string) string {
	items, ok := groupItems(lexProgram(s))
	if !ok {
		return collapseSpace(s)
	}
	return render(sortConj(items))
}

func sortConj(items []*item) []*item {
	for i, it := range items {
		if !it.group() {
			continue
		}
		it.kids = sortConj(it.kids)
		if i > 0 && !items[i-1].group() && isAnd(items[i-1].tok) || i > 0 && !items[i-1].group() && isOr(items[i-1].tok) {
			args, _ := splitTop(it.kids, isComma)
			sortParts(args)
			it.kids = joinParts(args, ",")
		}
	}
	// Infix operators: and/or tokens not directly followed by a group.
	infix := func(pred func(string) bool) func(int) bool {
		return func(i int) bool {
			return !items[i].group() && pred(items[i].tok) && (i+1 == len(items) || !items[i+1].group())
		}
	}
	hasOr, hasAnd := false, false
	for i := range items {
		hasOr = hasOr || infix(isOr)(i)
		hasAnd = hasAnd || infix(isAnd)(i)
	}
	if !hasOr && !hasAnd {
		return items
	}
	// Mark infix operator items so splitting ignores prefix calls.
	orTok, andTok := "", ""
	marked := make([]*item, len(items))
	for i, it := range items {
		marked[i] = it
		switch {
		case infix(isOr)(i):
			orTok = it.tok
			marked[i] = &item{tok: "\x00or"}
		case infix(isAnd)(i):
			andTok = it.tok
			marked[i] = &item{tok: "\x00and"}
		}
	}
	disj, _ := splitTop(marked, func(t string) bool { return t == "\x00or" })
	for k, d := range disj {
		conj, _ := splitTop(d, func(t string) bool { return t == "\x00and" })
		if len(conj) > 1 {
			sortParts(conj)
			disj[k] = joinParts(conj, andTok)
		}
	}
	if len(disj) > 1 {
		sortParts(disj)
		return joinParts(disj, orTok)
	}
	return disj[0]
}

// OrderFilters sorts the conditions of nested filters (Bogin et al. App.
// A.2, Overnight): ( filter ( filter X c1 ) c2 ) and ( call filter ... ),
// and the prefix form filter(filter(X, c1), c2), become the same chain with
// conditions in sorted order, innermost first.
func OrderFilters(s string) string {
	items, ok := groupItems(lexProgram(s))
	if !ok {
		return collapseSpace(s)
	}
	return render(orderFilters(items))
}

func orderFilters(items []*item) []*item {
	for _, it := range items {
		if it.group() {
			it.kids = orderFilters(it.kids)
		}
	}
	// S-expression: this group's items are [call] filter INNER cond...
	if base, conds, head, ok := sexprChain(items); ok && len(conds) > 1 {
		sortParts(conds)
		cur := base
		for _, c := range conds {
			kids := append(append(slices.Clone(head), cur), c...)
			cur = &item{tok: "(", kids: kids}
		}
		return cur.kids
	}
	// Prefix form: filter ( INNER , cond ) at any position.
	for i := 0; i+1 < len(items); i++ {
		if items[i].group() || items[i].tok != "filter" || !items[i+1].group() {
			continue
		}
		base, conds, ok := prefixChain(items[i+1])
		if !ok || len(conds) < 2 {
			continue
		}
		sortParts(conds)
		cur := base
		for _, c := range conds {
			args := joinParts([][]*item{cur, c}, ",")
			cur = []*item{{tok: "filter"}, {tok: "(", kids: args}}
		}
		items = append(append(slices.Clone(items[:i]), cur...), items[i+2:]...)
	}
	return items
}

// sexprChain reads a nested s-expression filter chain from group items.
func sexprChain(items []*item) (base *item, conds [][]*item, head []*item, ok bool) {
	h := 0
	if h < len(items) && !items[h].group() && items[h].tok == "call" {
		h++
	}
	if h+2 >= len(items) || items[h].group() || items[h].tok != "filter" {
		return nil, nil, nil, false
	}
	head = items[:h+1]
	inner, cond := items[h+1], items[h+2:]
	if inner.group() {
		if b, cs, hd, ok := sexprChain(inner.kids); ok && render(hd) == render(head) {
			return b, append(cs, cond), head, true
		}
	}
	return inner, [][]*item{cond}, head, true
}

// prefixChain reads filter(INNER, cond) chains from the argument group.
func prefixChain(g *item) (base []*item, conds [][]*item, ok bool) {
	args, _ := splitTop(g.kids, isComma)
	if len(args) < 2 {
		return nil, nil, false
	}
	inner := args[0]
	cond := joinParts(args[1:], ",")
	if len(inner) == 2 && !inner[0].group() && inner[0].tok == "filter" && inner[1].group() {
		if b, cs, ok := prefixChain(inner[1]); ok {
			return b, append(cs, cond), true
		}
	}
	return inner, [][]*item{cond}, true
}
