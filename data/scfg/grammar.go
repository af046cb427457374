// Package scfg reads synchronous context-free grammars in the COVR format of
// Bogin et al. ("Unobserved Local Structures Make Compositional
// Generalization Hard", §2.2 and App. B.2) and samples utterance/program pairs
// together with their derivations, so that grammar splits (§2.1) can be built
// for COVR and for any user grammar.
//
// Format, one production per line:
//
//	lhs -> program_rhs & utterance_rhs
//	lhs -> alt1 | alt2 | alt3
//
// Terminals are quoted ('x' or "x"); bare words are non-terminals. "|"
// separates alternatives, each of which is one rule. An alternative without
// "&" produces the same words on both sides: its utterance side drops the
// structural terminals ( ) , [ ]. Blank lines and lines starting
// with "#" are ignored. The terminals '[' and ']' glue what lies between them
// to the token before, so 'query_attr' '[' attr_name ']' gives the single
// token query_attr[color].
package scfg

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"compbench/data"
)

// Symbol is one item of a rule's right-hand side.
type Symbol struct {
	// Terminal is true for a quoted string, false for a non-terminal.
	Terminal bool
	// Text is the terminal's string (without quotes) or the non-terminal's name.
	Text string
}

// Rule is one alternative of a production.
type Rule struct {
	// ID is the rule's index in Grammar.Rules (file order).
	ID int
	// LHS is the non-terminal the rule rewrites.
	LHS string
	// Program is the program-side right-hand side.
	Program []Symbol
	// NL is the utterance-side right-hand side.
	NL []Symbol
	// Line is the 1-based line of the grammar file the rule came from.
	Line int
	// Label names the rule in derivation trees; unique within the grammar.
	Label string
	// nlLink[j] is the index, among the program side's non-terminals, of
	// the child that the utterance side's j-th non-terminal expands to.
	nlLink []int
}

// Children returns the non-terminals of the program side, in order: the
// children of this rule's node in a derivation tree.
func (r *Rule) Children() []string {
	var out []string
	for _, s := range r.Program {
		if !s.Terminal {
			out = append(out, s.Text)
		}
	}
	return out
}

// Grammar is a parsed synchronous grammar.
type Grammar struct {
	// Start is the LHS of the first production.
	Start string
	// Rules holds every alternative in file order.
	Rules []Rule
	// byLHS maps a non-terminal to the IDs of its rules.
	byLHS map[string][]int
	// byLabel maps a rule label to its ID.
	byLabel map[string]int
}

// RulesOf returns the IDs of the rules whose LHS is nt, in file order.
func (g *Grammar) RulesOf(nt string) []int { return g.byLHS[nt] }

// RuleByLabel finds a rule by its derivation-tree label.
func (g *Grammar) RuleByLabel(label string) (*Rule, bool) {
	id, ok := g.byLabel[label]
	if !ok {
		return nil, false
	}
	return &g.Rules[id], true
}

// NonTerminals lists every non-terminal with at least one rule, sorted.
func (g *Grammar) NonTerminals() []string {
	out := make([]string, 0, len(g.byLHS))
	for nt := range g.byLHS {
		out = append(out, nt)
	}
	sort.Strings(out)
	return out
}

// ParseFile reads a grammar file.
func ParseFile(path string) (*Grammar, error) {
	f, err := data.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// Parse reads a grammar. Errors name the offending line.
func Parse(r io.Reader) (*Grammar, error) {
	g := &Grammar{byLHS: map[string][]int{}, byLabel: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if err := g.addLine(text, line); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(g.Rules) == 0 {
		return nil, fmt.Errorf("no productions")
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	g.label()
	for i := range g.Rules {
		r := &g.Rules[i]
		if prev, ok := g.byLabel[r.Label]; ok {
			return nil, fmt.Errorf("line %d: rule %q repeats (first on line %d)", r.Line, r.Label, g.Rules[prev].Line)
		}
		g.byLabel[r.Label] = i
	}
	return g, nil
}

// token kinds of the right-hand-side lexer.
const (
	tokSym = iota
	tokBar
	tokAmp
)

type token struct {
	kind int
	sym  Symbol
}

// addLine parses "lhs -> rhs" and appends one rule per alternative.
func (g *Grammar) addLine(text string, line int) error {
	arrow := strings.Index(text, "->")
	if arrow < 0 {
		return fmt.Errorf("missing \"->\" in %q", text)
	}
	lhs := strings.TrimSpace(text[:arrow])
	if lhs == "" {
		return fmt.Errorf("missing left-hand side before \"->\"")
	}
	if !isName(lhs) {
		return fmt.Errorf("left-hand side %q is not a single non-terminal name", lhs)
	}
	toks, err := lex(text[arrow+2:])
	if err != nil {
		return err
	}
	if g.Start == "" {
		g.Start = lhs
	}
	var alt []token
	flush := func() error {
		r, err := makeRule(lhs, alt, line)
		if err != nil {
			return err
		}
		r.ID = len(g.Rules)
		g.Rules = append(g.Rules, r)
		g.byLHS[lhs] = append(g.byLHS[lhs], r.ID)
		alt = alt[:0]
		return nil
	}
	for _, t := range toks {
		if t.kind == tokBar {
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		alt = append(alt, t)
	}
	return flush()
}

// makeRule builds one alternative, splitting it at "&".
func makeRule(lhs string, alt []token, line int) (Rule, error) {
	r := Rule{LHS: lhs, Line: line}
	if len(alt) == 0 {
		return r, fmt.Errorf("%s: empty alternative", lhs)
	}
	side := 0
	for _, t := range alt {
		if t.kind == tokAmp {
			side++
			if side > 1 {
				return r, fmt.Errorf("%s: more than one \"&\" in an alternative", lhs)
			}
			continue
		}
		if side == 0 {
			r.Program = append(r.Program, t.sym)
		} else {
			r.NL = append(r.NL, t.sym)
		}
	}
	if len(r.Program) == 0 {
		return r, fmt.Errorf("%s: empty program side before \"&\"", lhs)
	}
	if side == 0 {
		r.NL = implicitNL(r.Program)
	} else if len(r.NL) == 0 {
		return r, fmt.Errorf("%s: empty utterance side after \"&\"", lhs)
	}
	for _, s := range [][]Symbol{r.Program, r.NL} {
		if err := checkBrackets(s); err != nil {
			return r, fmt.Errorf("%s: %w", lhs, err)
		}
	}
	link, err := linkSides(r.Program, r.NL)
	if err != nil {
		return r, fmt.Errorf("%s: %w", lhs, err)
	}
	r.nlLink = link
	return r, nil
}

// structural are the program terminals that carry tree structure only
// (Bogin et al.'s public code treats parentheses and commas as structure).
var structural = map[string]bool{"(": true, ")": true, ",": true, "[": true, "]": true}

// implicitNL is the utterance side of a rule written without "&": the same
// string minus structural terminals. The format says such a rule produces
// the same string on both sides, but COVR's utterances never contain the
// program's brackets (Bogin et al. Table 9: "the number of black dog" from
// the "&"-less rule number_objects -> count '(' some_ref ')'), so we take
// "the same string" to mean the same words.
func implicitNL(prog []Symbol) []Symbol {
	out := make([]Symbol, 0, len(prog))
	for _, s := range prog {
		if s.Terminal && structural[s.Text] {
			continue
		}
		out = append(out, s)
	}
	return out
}

// linkSides pairs the k-th occurrence of each non-terminal on the utterance
// side with its k-th occurrence on the program side (the usual SCFG
// convention when a rule repeats a non-terminal, as COVR's boolean_or does).
func linkSides(prog, nl []Symbol) ([]int, error) {
	pos := map[string][]int{}
	n := 0
	var pnames []string
	for _, s := range prog {
		if !s.Terminal {
			pos[s.Text] = append(pos[s.Text], n)
			pnames = append(pnames, s.Text)
			n++
		}
	}
	used := map[string]int{}
	var link []int
	var nnames []string
	for _, s := range nl {
		if s.Terminal {
			continue
		}
		nnames = append(nnames, s.Text)
		k := used[s.Text]
		used[s.Text]++
		if k < len(pos[s.Text]) {
			link = append(link, pos[s.Text][k])
		}
	}
	if len(link) != n || len(nnames) != n {
		sort.Strings(pnames)
		sort.Strings(nnames)
		return nil, fmt.Errorf("non-terminals differ between program side [%s] and utterance side [%s]",
			strings.Join(pnames, " "), strings.Join(nnames, " "))
	}
	return link, nil
}

// checkBrackets requires '[' and ']' terminals to pair up within one side of
// one rule, without nesting, and '[' never to open a side (it glues to the
// token before it).
func checkBrackets(side []Symbol) error {
	open := false
	for i, s := range side {
		if !s.Terminal {
			continue
		}
		switch s.Text {
		case "[":
			if open {
				return fmt.Errorf("nested '['")
			}
			if i == 0 {
				return fmt.Errorf("'[' must follow a symbol it attaches to")
			}
			open = true
		case "]":
			if !open {
				return fmt.Errorf("']' without '['")
			}
			open = false
		}
	}
	if open {
		return fmt.Errorf("'[' without ']'")
	}
	return nil
}

// lex splits a right-hand side into symbols, "|" and "&".
func lex(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '|':
			out = append(out, token{kind: tokBar})
			i++
		case c == '&':
			out = append(out, token{kind: tokAmp})
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unbalanced quote %c starting at %q", c, s[i:])
			}
			out = append(out, token{kind: tokSym, sym: Symbol{Terminal: true, Text: s[i+1 : i+1+j]}})
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t|&'\"", rune(s[j])) {
				j++
			}
			name := s[i:j]
			if !isName(name) {
				return nil, fmt.Errorf("bad symbol %q (quote terminals; non-terminals are names)", name)
			}
			out = append(out, token{kind: tokSym, sym: Symbol{Text: name}})
			i = j
		}
	}
	return out, nil
}

// isName accepts identifiers of letters, digits, '_', '-' and '.'.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		ok := c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok {
			return false
		}
	}
	return true
}

// check reports the first use of a non-terminal that has no rules.
func (g *Grammar) check() error {
	for _, r := range g.Rules {
		for _, s := range r.Program {
			if !s.Terminal && len(g.byLHS[s.Text]) == 0 {
				return fmt.Errorf("line %d: undefined non-terminal %q", r.Line, s.Text)
			}
		}
	}
	return nil
}

// label names each rule by its LHS and program side, as the paper writes
// rules (App. B.2, Fig. 5: "boolean_single → exists ref"). Rules that share
// both (paraphrases) add their utterance side to stay distinct.
func (g *Grammar) label() {
	count := map[string]int{}
	for i := range g.Rules {
		r := &g.Rules[i]
		r.Label = r.LHS + " -> " + side(r.Program)
		count[r.Label]++
	}
	for i := range g.Rules {
		r := &g.Rules[i]
		if count[r.Label] > 1 {
			r.Label += " & " + side(r.NL)
		}
	}
}

func side(s []Symbol) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = x.String()
	}
	return strings.Join(parts, " ")
}

// String writes a symbol as in a grammar file.
func (s Symbol) String() string {
	if !s.Terminal {
		return s.Text
	}
	if strings.ContainsRune(s.Text, '\'') {
		return `"` + s.Text + `"`
	}
	return "'" + s.Text + "'"
}
