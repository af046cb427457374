package split

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/scfg"
)

func fig5(t *testing.T) *scfg.Grammar {
	t.Helper()
	g, err := scfg.ParseFile("testdata/grammar_fig5.txt")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fig5Pool samples a fixed pool from the test grammar.
func fig5Pool(t *testing.T, g *scfg.Grammar, n int) []data.Record {
	t.Helper()
	cfg := scfg.DefaultConfig()
	cfg.N, cfg.MaxDepth, cfg.Seed, cfg.Dedupe = n, 8, 3, true
	var pool []data.Record
	err := scfg.Generate(context.Background(), g, cfg, func(r *data.Record) error {
		pool = append(pool, *r)
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

func TestMeaningfulNonTerminals(t *testing.T) {
	got := MeaningfulNonTerminals(fig5(t))
	// count, exists, number_objects, compare_count, boolean_and and
	// boolean_or each have one rule and appear in one rule's RHS.
	want := []string{"answer", "boolean_pair", "boolean_single", "ref", "number"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("meaningful = %v, want %v", got, want)
	}
}

// The pair (boolean_pair, boolean_single) of App. B.2, Fig. 5: U_comb, its
// four single pairs, and the four per-rule sets.
func TestHeldOutSetsFig5(t *testing.T) {
	var got []HeldOut
	for _, h := range HeldOutSets(fig5(t)) {
		if h.L1 == "boolean_pair" && h.L2 == "boolean_single" {
			got = append(got, h)
		}
	}
	and, or := "boolean_pair -> boolean_and", "boolean_pair -> boolean_or"
	ex, cc := "boolean_single -> exists '(' ref ')'", "boolean_single -> compare_count"
	want := []struct {
		kind, rule string
		pairs      []RulePair
	}{
		{KindComb, "", []RulePair{{and, ex}, {and, cc}, {or, ex}, {or, cc}}},
		{KindPair, "", []RulePair{{and, ex}}},
		{KindPair, "", []RulePair{{and, cc}}},
		{KindPair, "", []RulePair{{or, ex}}},
		{KindPair, "", []RulePair{{or, cc}}},
		{KindRule, and, []RulePair{{and, ex}, {and, cc}}},
		{KindRule, or, []RulePair{{or, ex}, {or, cc}}},
		{KindRule, ex, []RulePair{{and, ex}, {or, ex}}},
		{KindRule, cc, []RulePair{{and, cc}, {or, cc}}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d sets, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].Rule != w.rule || !reflect.DeepEqual(got[i].Pairs, w.pairs) {
			t.Errorf("set %d = %s %q %v, want %s %q %v", i, got[i].Kind, got[i].Rule, got[i].Pairs, w.kind, w.rule, w.pairs)
		}
	}
}

// When G_l2 has one rule, the per-rule sets repeat U_comb or a single pair
// and are not yielded twice.
func TestHeldOutSetsDedupe(t *testing.T) {
	g, err := scfg.Parse(strings.NewReader("s -> a b\na -> 'x' | 'y'\nb -> 'z' & 'w'\nc -> b b | 'q'\n"))
	if err != nil {
		t.Fatal(err)
	}
	// meaningful: a (2 rules), b (in the RHS of two rules), c (2 rules).
	sets := HeldOutSets(g)
	seen := map[string]bool{}
	for _, h := range sets {
		key := h.L1 + "|" + h.L2 + "|" + strings.Join(flatten(h.Pairs), ";")
		if seen[key] {
			t.Errorf("set %v yielded twice", h.Pairs)
		}
		seen[key] = true
	}
	// (a, b): comb of 2, pairs 2 (each equal to a per-rule set of a), the
	// per-rule set of b equals comb: 3 sets.
	n := 0
	for _, h := range sets {
		if h.L1 == "a" && h.L2 == "b" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("(a, b) gave %d sets, want 3", n)
	}
}

func flatten(ps []RulePair) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p[0]+","+p[1])
	}
	return out
}

func TestGrammarSplitInvariants(t *testing.T) {
	g := fig5(t)
	pool := fig5Pool(t, g, 200)
	for _, devFrac := range []float64{0, 0.2} {
		cfg := DefaultGrammarConfig()
		cfg.DevFrac, cfg.Seed = devFrac, 9
		s, err := NewGrammarSplitter(g, pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		valid := 0
		for k := 0; k < s.Len(); k++ {
			c, err := s.Candidate(k)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(c.Kind, func(t *testing.T) {
				checkGrammarCandidate(t, s, &c, devFrac)
			})
			if c.Valid {
				valid++
			}
		}
		if valid == 0 || valid == s.Len() {
			t.Errorf("dev %v: %d of %d candidates valid; want some valid and some not", devFrac, valid, s.Len())
		}
	}
}

func checkGrammarCandidate(t *testing.T, s *GrammarSplitter, c *GrammarCandidate, devFrac float64) {
	part := make([]int, len(s.pool))
	for p, idx := range [][]int{c.Train, c.Dev, c.Test} {
		for _, i := range idx {
			if part[i] != 0 {
				t.Fatalf("candidate %d: example %d in two parts", c.Index, i)
			}
			part[i] = p + 1
		}
	}
	for i, p := range part {
		if p == 0 {
			t.Fatalf("candidate %d: example %d in no part", c.Index, i)
		}
	}
	heldOut := func(i int) bool {
		for _, p := range c.Pairs {
			r1, _ := s.g.RuleByLabel(p[0])
			r2, _ := s.g.RuleByLabel(p[1])
			if s.has(i, r1.ID) && s.has(i, r2.ID) {
				return true
			}
		}
		return false
	}
	for i, p := range part {
		if heldOut(i) != (p == 3) {
			t.Fatalf("candidate %d: example %q held out = %v but in part %d", c.Index, s.pool[i].ID, heldOut(i), p)
		}
	}
	wantDev := int(float64(len(c.Train)+len(c.Dev))*devFrac + 0.5)
	if len(c.Dev) != wantDev {
		t.Errorf("candidate %d: dev %d, want %d", c.Index, len(c.Dev), wantDev)
	}
	train := map[string]bool{}
	for _, i := range c.Train {
		for _, tok := range strings.Fields(s.pool[i].Output) {
			train[tok] = true
		}
	}
	var missing []string
	for _, i := range c.Test {
		for _, tok := range strings.Fields(s.pool[i].Output) {
			if !train[tok] {
				missing = append(missing, tok)
			}
		}
	}
	if c.Valid != (len(missing) == 0 && len(c.Test) > 0 && len(c.Train) > 0) {
		t.Errorf("candidate %d: valid %v, missing %v, test %d (reason %q)", c.Index, c.Valid, missing, len(c.Test), c.Reason)
	}
}

func TestGrammarSplitGolden(t *testing.T) {
	g := fig5(t)
	pool := fig5Pool(t, g, 200)
	cfg := DefaultGrammarConfig()
	cfg.DevFrac = 0.1
	list := func() []byte {
		s, err := NewGrammarSplitter(g, pool, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteGrammarList(&b, s.Candidates(nil)); err != nil {
			t.Fatal(err)
		}
		c, err := s.Candidate(5)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("candidate 5 test ids:")
		for _, i := range c.Test {
			b.WriteString(" " + pool[i].ID)
		}
		b.WriteString("\ncandidate 5 dev ids:")
		for _, i := range c.Dev {
			b.WriteString(" " + pool[i].ID)
		}
		b.WriteString("\n")
		return b.Bytes()
	}
	got := list()
	if again := list(); !bytes.Equal(got, again) {
		t.Fatal("same seed gave different splits")
	}
	const golden = "testdata/grammar_fig5.golden.txt"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("list differs from %s; rerun with -update if intended\n%s", golden, got)
	}
}

func TestGrammarSplitErrors(t *testing.T) {
	g := fig5(t)
	good := fig5Pool(t, g, 5)
	noTree := append([]data.Record(nil), good...)
	noTree[2].Tree = nil
	badLabel := append([]data.Record(nil), good...)
	badLabel[1].Tree = &data.Tree{Label: "answer -> nothing"}
	tests := []struct {
		name string
		pool []data.Record
		cfg  GrammarConfig
		want string
	}{
		{"empty pool", nil, DefaultGrammarConfig(), "empty pool"},
		{"no tree", noTree, DefaultGrammarConfig(), "has no derivation tree"},
		{"label not a rule", badLabel, DefaultGrammarConfig(), `tree label "answer -> nothing" is not a rule`},
		{"dev fraction", good, GrammarConfig{DevFrac: 1}, "dev fraction"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewGrammarSplitter(g, tc.pool, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	s, err := NewGrammarSplitter(g, good, DefaultGrammarConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Candidate(s.Len()); err == nil {
		t.Error("index out of range: want an error")
	}
}
