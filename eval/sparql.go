package eval

import (
	"slices"
	"strconv"
	"strings"
)

// maxBrute is the largest variable count whose renamings are all tried;
// beyond it a fixed-point heuristic is used (CFQ queries have fewer).
const maxBrute = 6

// NormalizeSPARQL canonicalizes a CFQ-style query (Keysers et al. §5,
// tokens separated by spaces, preprocessed as CFQ): the clauses of the
// WHERE block (separated by ".") are sorted and repeated clauses dropped,
// and the variables ?name are renumbered ?x0, ?x1, ... choosing, among
// all renumberings, the one whose text is smallest, so two queries that
// differ only in clause order and variable names normalize to the same
// text. Entities (M0, m_01...) are kept. Text without a "{ ... }" block is
// only white-space normalized.
func NormalizeSPARQL(s string) string {
	toks := strings.Fields(s)
	open := slices.Index(toks, "{")
	close := -1
	for i := len(toks) - 1; i > open; i-- {
		if toks[i] == "}" {
			close = i
			break
		}
	}
	if open < 0 || close < 0 {
		return strings.Join(toks, " ")
	}
	head, tail := toks[:open+1], toks[close:]
	var clauses [][]string
	cur := []string{}
	for _, t := range toks[open+1 : close] {
		if t == "." {
			if len(cur) > 0 {
				clauses = append(clauses, cur)
			}
			cur = []string{}
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		clauses = append(clauses, cur)
	}
	var vars []string
	seen := map[string]int{}
	note := func(ts []string) {
		for _, t := range ts {
			if isVar(t) {
				if _, ok := seen[t]; !ok {
					seen[t] = len(vars)
					vars = append(vars, t)
				}
			}
		}
	}
	note(head)
	for _, c := range clauses {
		note(c)
	}
	q := &query{head: head, tail: tail, clauses: clauses, vars: seen}
	if len(vars) <= maxBrute {
		return q.bestPermutation(len(vars))
	}
	return q.fixedPoint(len(vars))
}

func isVar(t string) bool { return len(t) > 1 && t[0] == '?' }

type query struct {
	head, tail []string
	clauses    [][]string
	vars       map[string]int
}

// text renders the query with variable v renamed ?x{perm[v]}.
func (q *query) text(perm []int) string {
	ren := func(ts []string) string {
		out := make([]string, len(ts))
		for i, t := range ts {
			if v, ok := q.vars[t]; ok {
				out[i] = "?x" + strconv.Itoa(perm[v])
			} else {
				out[i] = t
			}
		}
		return strings.Join(out, " ")
	}
	cs := make([]string, len(q.clauses))
	for i, c := range q.clauses {
		cs[i] = ren(c)
	}
	slices.Sort(cs)
	cs = slices.Compact(cs)
	return ren(q.head) + " " + strings.Join(cs, " . ") + " " + ren(q.tail)
}

func (q *query) bestPermutation(k int) string {
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	best := q.text(perm)
	for nextPerm(perm) {
		if t := q.text(perm); t < best {
			best = t
		}
	}
	return best
}

// nextPerm advances p to the next permutation in lexicographic order.
func nextPerm(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}

// fixedPoint renumbers variables by first appearance in the sorted text
// until the numbering no longer changes.
func (q *query) fixedPoint(k int) string {
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	for range k + 1 {
		t := q.text(perm)
		order := map[int]int{}
		for _, tok := range strings.Fields(t) {
			if isVar(tok) {
				n, _ := strconv.Atoi(tok[2:])
				if _, ok := order[n]; !ok {
					order[n] = len(order)
				}
			}
		}
		next := make([]int, k)
		changed := false
		for v := range perm {
			next[v] = order[perm[v]]
			changed = changed || next[v] != perm[v]
		}
		perm = next
		if !changed {
			break
		}
	}
	return q.text(perm)
}
