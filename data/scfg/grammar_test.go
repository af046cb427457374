package scfg

import (
	"compbench/data"
	"strings"
	"testing"
)

func mustParse(t *testing.T, src string) *Grammar {
	t.Helper()
	g, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return g
}

func TestParseTiny(t *testing.T) {
	g, err := ParseFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	if g.Start != "answer" {
		t.Errorf("start = %q, want answer", g.Start)
	}
	if len(g.Rules) != 18 {
		t.Errorf("%d rules, want 18", len(g.Rules))
	}
	tests := []struct {
		nt    string
		rules int
	}{
		{"answer", 2}, {"boolean", 2}, {"ref", 3}, {"logic", 2}, {"exists", 1}, {"noun", 2},
	}
	for _, tc := range tests {
		t.Run(tc.nt, func(t *testing.T) {
			if n := len(g.RulesOf(tc.nt)); n != tc.rules {
				t.Errorf("%d rules, want %d", n, tc.rules)
			}
		})
	}
	for _, label := range []string{
		"boolean -> logic '(' boolean ',' boolean ')'",
		"relation -> 'playing with'",
		"ref -> 'scene' '(' ')'",
		"query -> 'query_attr' '[' attr ']' '(' ref ')'",
	} {
		r, ok := g.RuleByLabel(label)
		if !ok {
			t.Errorf("no rule labelled %q", label)
			continue
		}
		if r.Label != label || g.Rules[r.ID].Label != label {
			t.Errorf("rule %d label mismatch", r.ID)
		}
	}
}

func TestParseLabelsParaphrases(t *testing.T) {
	g := mustParse(t, "s -> 'x' & 'an x' | 'x' & 'one x'\n")
	want := []string{"s -> 'x' & 'an x'", "s -> 'x' & 'one x'"}
	for i, w := range want {
		if g.Rules[i].Label != w {
			t.Errorf("rule %d label %q, want %q", i, g.Rules[i].Label, w)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"empty", "\n# only a comment\n", "no productions"},
		{"undefined", "s -> a 'x'\n\na -> b\n", "line 3: undefined non-terminal \"b\""},
		{"unbalanced quote", "s -> 'x\n", "line 1: unbalanced quote"},
		{"unbalanced double quote", "s -> 'x'\ns -> \"y\n", "line 2: unbalanced quote"},
		{"mismatched sides", "s -> a b & a\na -> 'x'\nb -> 'y'\n", "line 1: s: non-terminals differ between program side [a b] and utterance side [a]"},
		{"mismatched names", "s -> a & b\na -> 'x'\nb -> 'y'\n", "non-terminals differ"},
		{"missing arrow", "s 'x'\n", "line 1: missing \"->\""},
		{"missing lhs", " -> 'x'\n", "missing left-hand side"},
		{"lhs not a name", "s t -> 'x'\n", "not a single non-terminal name"},
		{"empty alternative", "s -> 'x' | \n", "line 1: s: empty alternative"},
		{"empty program side", "s -> & 'x'\n", "empty program side"},
		{"empty utterance side", "s -> 'x' &\n", "empty utterance side"},
		{"two ampersands", "s -> 'x' & 'y' & 'z'\n", "more than one \"&\""},
		{"bad symbol", "s -> x->y\n", "bad symbol"},
		{"unclosed bracket", "s -> 'a' '[' 'b'\n", "'[' without ']'"},
		{"stray bracket", "s -> 'a' ']'\n", "']' without '['"},
		{"leading bracket", "s -> '[' 'a' ']'\n", "must follow"},
		{"duplicate rule", "s -> 'x'\ns -> 'x'\n", "repeats (first on line 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.src))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseFileMissing(t *testing.T) {
	if _, err := ParseFile("testdata/no-such-grammar.txt"); err == nil {
		t.Fatal("want error for a missing file")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"s -> 'x'",
		"s -> a '(' b ')' & b 'of' a\na -> 'p' | 'q'\nb -> 'r'",
		"s -> 'q' '[' a ']' & 'the' a\na -> 'color'",
		"s -> s s | 'x'",
		"s -> t\nt -> t",
		"s -> 'x\n",
		"s -> x & y & z",
		"# c\n\ns -> \"it's\" | ' '",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		g, err := Parse(strings.NewReader(src))
		if err != nil {
			return
		}
		for i, r := range g.Rules {
			if r.ID != i || r.Label == "" {
				t.Fatalf("rule %d: bad id or label %+v", i, r)
			}
			if got, ok := g.RuleByLabel(r.Label); !ok || got.ID != i {
				t.Fatalf("rule %d: label %q does not find it", i, r.Label)
			}
		}
		s := NewSampler(g)
		d, err := s.MinDepth(g.Start)
		if err != nil || d > 6 {
			return
		}
		if _, err := s.Sample(data.NewRand(1), g.Start, d); err != nil && !strings.Contains(err.Error(), "exceeds") {
			t.Fatalf("sample at min depth %d: %v", d, err)
		}
	})
}
