package structure

import (
	"strings"
	"testing"

	"compbench/data"
)

// Logical forms from COGS's published files (the excerpt in
// data/testdata/cogs), with their trees written out by hand.
func TestParseCOGS(t *testing.T) {
	for _, tc := range []struct {
		name, lf, want string
	}{
		{"definite subject", "* sailor ( x _ 1 ) ; dust . agent ( x _ 2 , x _ 1 ) AND dust . theme ( x _ 2 , x _ 4 ) AND boy ( x _ 4 )",
			"dust(agent(*(sailor)), theme(boy))"},
		{"passive, noun first", "rose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 ) AND help . agent ( x _ 3 , x _ 6 ) AND dog ( x _ 6 )",
			"help(theme(rose), agent(dog))"},
		{"proper names", "roll . agent ( x _ 1 , Emma ) AND roll . theme ( x _ 1 , x _ 3 ) AND teacher ( x _ 3 )",
			"roll(agent(Emma), theme(teacher))"},
		{"pp modifier", "* cookie ( x _ 3 ) ; * bucket ( x _ 6 ) ; squeeze . agent ( x _ 1 , Jaxon ) AND squeeze . theme ( x _ 1 , x _ 3 ) AND cookie . nmod . in ( x _ 3 , x _ 6 )",
			"squeeze(agent(Jaxon), theme(*(cookie(nmod.in(*(bucket))))))"},
		{"pp on the subject", "* baby ( x _ 1 ) ; * house ( x _ 7 ) ; baby . nmod . on ( x _ 1 , x _ 4 ) AND tray ( x _ 4 ) AND tray . nmod . in ( x _ 4 , x _ 7 ) AND scream . agent ( x _ 8 , x _ 1 )",
			"scream(agent(*(baby(nmod.on(tray(nmod.in(*(house))))))))"},
		{"clause", "like . agent ( x _ 1 , Noah ) AND like . ccomp ( x _ 1 , x _ 6 ) AND cookie ( x _ 4 ) AND bless . theme ( x _ 6 , x _ 4 )",
			"like(agent(Noah), ccomp(bless(theme(cookie))))"},
		{"controller placed once", "* boy ( x _ 1 ) ; need . agent ( x _ 2 , x _ 1 ) AND need . xcomp ( x _ 2 , x _ 4 ) AND crawl . agent ( x _ 4 , x _ 1 )",
			"need(agent(*(boy)), xcomp(crawl(agent(boy))))"},
		{"verb primitive", "LAMBDA a . LAMBDA b . LAMBDA e . touch . agent ( e , b ) AND touch . theme ( e , a )", "touch(agent(b), theme(a))"},
		{"unaccusative primitive", "LAMBDA a . LAMBDA e . inflate . theme ( e , a )", "inflate(theme(a))"},
		{"noun primitive", "LAMBDA a . ball ( a )", "ball"},
		{"name primitive", "Emma", "Emma"},
		{"bare noun", " cat ", "cat"},
		{"unspaced", "*cat(x_1);like.agent(x_2,x_1)", "like(agent(*(cat)))"},
		{"two roots", "cat ( x _ 1 ) AND dog ( x _ 2 )", "AND(cat, dog)"},
		{"variable without a word", "like . theme ( x _ 1 , x _ 2 )", "like(theme(x))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseCOGS(tc.lf)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseCOGSErrors(t *testing.T) {
	for _, tc := range []struct {
		name, lf, msg string
	}{
		{"empty", "  ", "empty logical form"},
		{"unclosed", "cat ( x _ 1", "expected , or )"},
		{"no arguments", "cat ( )", "expected an argument"},
		{"three arguments", "give . agent ( x _ 1 , x _ 2 , x _ 3 )", "3 arguments"},
		{"constant first", "like . agent ( Emma , x _ 1 )", "first argument Emma is not a variable"},
		{"no relation", "like ( x _ 1 , x _ 2 )", "has no relation"},
		{"definite binary", "* like . agent ( x _ 1 , x _ 2 )", "definite * on the binary"},
		{"two words", "cat ( x _ 1 ) AND dog ( x _ 1 )", "variable x _ 1 is both cat and dog"},
		{"cycle", "a . r ( x _ 1 , x _ 2 ) AND b . r ( x _ 2 , x _ 1 )", "cycle"},
		{"bad number", "cat ( x _ one )", "expected a number after x _"},
		{"trailing AND", "cat ( x _ 1 ) AND", "expected a predicate: end of input"},
		{"no separator", "cat ( x _ 1 ) dog ( x _ 2 )", "expected ; or AND"},
		{"bad lambda", "LAMBDA ( . cat ( a )", "expected a variable after LAMBDA"},
		{"lambda without dot", "LAMBDA a cat ( a )", "expected . after LAMBDA a"},
		{"two bare words", "cat dog", "expected ( after predicate cat"},
		{"dot without word", "like . ( x _ 1 )", "expected a word after ."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseCOGS(tc.lf)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ParseCOGS(%q) = %v, %v; want an error containing %q", tc.lf, tr, err, tc.msg)
			}
		})
	}
}

// TestCOGSAuto: auto reads COGS's logical forms as cogs trees, and the
// primitives that are one word the same way as the bracketed reader.
func TestCOGSAuto(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"sentence", "* cat ( x _ 1 ) ; like . agent ( x _ 2 , x _ 1 )", "like(agent(*(cat)))"},
		{"lambda", "LAMBDA a . ball ( a )", "ball"},
		{"name", "Emma", "Emma"},
		{"funql stays bracketed", "answer ( loc_2 ( m0 ) )", "answer(loc_2(m0))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := RecordTree(&data.Record{ID: "r", Output: tc.out}, TreeAuto)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	if _, err := RecordTree(&data.Record{ID: "r", Output: "cat ( x _ 1"}, TreeCOGS); err == nil || !strings.HasPrefix(err.Error(), "output: ") {
		t.Errorf("RecordTree error %v, want one naming the output", err)
	}
}

// FuzzParseCOGS checks the parser never panics and that every tree it
// returns has labels and as many nodes at most as tokens plus one per
// relation (each conjunct adds at most a relation node, a word and a *).
func FuzzParseCOGS(f *testing.F) {
	for _, s := range []string{
		"* sailor ( x _ 1 ) ; dust . agent ( x _ 2 , x _ 1 ) AND dust . theme ( x _ 2 , x _ 4 ) AND boy ( x _ 4 )",
		"LAMBDA a . LAMBDA e . inflate . theme ( e , a )", "Emma", "cat(x_1)", "a . r ( x _ 1 , x _ 2 ) AND b . r ( x _ 2 , x _ 1 )",
		"LAMBDA x . cat ( x )", "* * cat ( x _ 1 )", "x _ 99999999999 ", "( ) , ; . * _",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseCOGS(s)
		if err != nil {
			return
		}
		nodes := 0
		var walk func(*data.Tree)
		walk = func(n *data.Tree) {
			nodes++
			if n.Label == "" {
				t.Fatalf("empty label in %s (from %q)", tr, s)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(tr)
		if limit := 3*len(cogsLex(s)) + 1; nodes > limit {
			t.Fatalf("%d nodes from %d tokens (%q)", nodes, len(cogsLex(s)), s)
		}
	})
}
