package eval

import (
	"strings"

	"compbench/data"
	"compbench/data/structure"
)

// Symbols returns the program symbols of an output in order: tokens split
// on white space and ( ) , with structure tokens dropped, and "f [ x ]"
// joined into the one symbol "f[x]" as the tree parser does (COVR's
// query_attr[color]).
func Symbols(s string) []string {
	toks := lexProgram(s)
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "(" || t == ")" || t == "," {
			continue
		}
		if i+3 < len(toks) && toks[i+1] == "[" && toks[i+3] == "]" {
			t = t + "[" + toks[i+2] + "]"
			i += 3
		} else if i+1 < len(toks) && strings.HasPrefix(toks[i+1], "[") && strings.HasSuffix(toks[i+1], "]") {
			t += toks[i+1]
			i++
		}
		out = append(out, t)
	}
	return out
}

// TreeSymbols returns t's labels in pre-order: for a tree parsed from a
// program's text, the sequence Symbols reads from that text. first-error
// compares the two to refuse trees that do not describe the output, such
// as a grammar derivation labelled with rules.
func TreeSymbols(t *data.Tree) []string {
	var out []string
	var walk func(*data.Tree)
	walk = func(n *data.Tree) {
		out = append(out, n.Label)
		for _, c := range n.Children {
			walk(c)
		}
	}
	if t != nil {
		walk(t)
	}
	return out
}

// FirstError is the token-level analysis of Bogin et al. §5.1 for one
// wrong prediction whose gold program has unobserved 2-LSs: with i the
// first position where the predicted symbols differ from the gold ones,
// hit reports whether some unobserved 2-LS (m1, m2) — parent and child, or
// left and right sibling — has m1 among the gold symbols before i and
// m2 the gold symbol at i. applicable is false when the gold program has
// no unobserved 2-LS or the prediction matches the gold symbols.
//
// Decisions: positions count program symbols only (structure tokens are
// never part of a 2-LS, so they are skipped on both sides); the root <s>
// counts as part of every prefix, so a wrong first symbol whose (<s>, m2)
// structure is unobserved is a hit.
func FirstError(m *structure.Model, goldTree *data.Tree, gold, pred []string) (applicable, hit bool) {
	syms := m.Symbols()
	var unobs [][2]string
	for _, s := range m.Structures(m.Graph(goldTree)) {
		if (s.Shape == structure.PC || s.Shape == structure.Sib) && !m.Observed(s) {
			unobs = append(unobs, [2]string{syms.Name(s.Sym[0]), syms.Name(s.Sym[1])})
		}
	}
	if len(unobs) == 0 {
		return false, false
	}
	i := 0
	for i < len(gold) && i < len(pred) && gold[i] == pred[i] {
		i++
	}
	if i == len(gold) && i == len(pred) {
		return false, false
	}
	if i >= len(gold) {
		return true, false // the prediction only runs on past the gold
	}
	prefix := map[string]bool{structure.Root: true}
	for _, t := range gold[:i] {
		prefix[t] = true
	}
	for _, u := range unobs {
		if u[1] == gold[i] && prefix[u[0]] {
			return true, true
		}
	}
	return true, false
}
