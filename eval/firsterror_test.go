package eval

import (
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

func tn(label string, ch ...*data.Tree) *data.Tree { return &data.Tree{Label: label, Children: ch} }

func TestSymbols(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"or(exists(find(dog)), all(find(cat)))", "or exists find dog all find cat"},
		{"query_attr [ color ] ( find ( cat ) )", "query_attr[color] find cat"},
		{"query_attr[color](find(cat))", "query_attr[color] find cat"},
	} {
		got := Symbols(tc.in)
		if want := strings.Fields(tc.want); !slices.Equal(got, want) {
			t.Errorf("%q: got %q want %q", tc.in, got, want)
		}
	}
}

func TestTreeSymbols(t *testing.T) {
	for _, tc := range []struct {
		name string
		tree *data.Tree
		want string
	}{
		{"program", tn("or", tn("exists", tn("find", tn("dog"))), tn("all", tn("cat"))), "or exists find dog all cat"},
		{"leaf", tn("x"), "x"},
		{"nil", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := TreeSymbols(tc.tree), strings.Fields(tc.want); !slices.Equal(got, want) {
				t.Fatalf("got %q want %q", got, want)
			}
		})
	}
	// A bracketed program's tree spells what Symbols reads from its text.
	out := "query_attr [ color ] ( with_relation ( find ( cat ) , chasing , scene ( ) ) )"
	tr, err := structure.ParseBracketed(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := TreeSymbols(tr), Symbols(out); !slices.Equal(got, want) {
		t.Fatalf("tree %q, text %q", got, want)
	}
}

func TestFirstError(t *testing.T) {
	// Training never has exists under or: the gold's (or, exists) is an
	// unobserved 2-LS (the paper's §5.1 example).
	train := []*data.Tree{
		tn("or", tn("all", tn("find", tn("dog"))), tn("all", tn("find", tn("cat")))),
		tn("and", tn("exists", tn("find", tn("dog"))), tn("all", tn("find", tn("cat")))),
	}
	m, err := structure.Train(train, structure.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	goldOut := "or(exists(find(dog)), all(find(cat)))"
	goldTree := tn("or", tn("exists", tn("find", tn("dog"))), tn("all", tn("find", tn("cat"))))
	for _, tc := range []struct {
		name, pred      string
		applicable, hit bool
	}{
		// first error at "exists" (position 1): (or, exists) completes with or in the prefix.
		{"emits observed instead", "or(all(find(dog)), all(find(cat)))", true, true},
		// first error at "cat"->"dog" (position 6): no unobserved 2-LS ends in cat.
		{"later error", "or(exists(find(dog)), all(find(dog)))", true, false},
		{"correct", goldOut, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, hit := FirstError(m, goldTree, Symbols(goldOut), Symbols(tc.pred))
			if app != tc.applicable || hit != tc.hit {
				t.Fatalf("applicable=%v hit=%v", app, hit)
			}
		})
	}
	// A gold program with every 2-LS observed is not counted.
	obs := tn("or", tn("all", tn("find", tn("dog"))), tn("all", tn("find", tn("cat"))))
	if app, _ := FirstError(m, obs, Symbols("or(all(find(dog)), all(find(cat)))"), Symbols("x")); app {
		t.Fatal("fully observed gold counted")
	}
}

func TestSelect(t *testing.T) {
	var pool []*data.Tree
	qs := []string{"exists", "most", "all"}
	es := []string{"dog", "cat", "mouse"}
	for i := range 60 {
		pool = append(pool, tn(qs[i%3], tn("find", tn(es[(i/3)%3]))))
	}
	pool = append(pool, tn("rare", tn("thing"))) // only example with these symbols
	for _, tc := range []struct {
		name string
		cfg  SelectConfig
		ok   bool
	}{
		{"nls", SelectConfig{Budget: 10, Strategy: SelectNLS, N: 2}, true},
		{"random", SelectConfig{Budget: 10, Strategy: SelectRandom, N: 2}, true},
		{"budget too big", SelectConfig{Budget: 100, Strategy: SelectNLS, N: 2}, false},
		{"bad strategy", SelectConfig{Budget: 3, Strategy: "x", N: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Select(pool, tc.cfg, data.NewRand(3))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if !tc.ok {
				return
			}
			again, _ := Select(pool, tc.cfg, data.NewRand(3))
			if !slices.Equal(got, again) || len(got) != tc.cfg.Budget {
				t.Fatalf("not deterministic or wrong size: %v %v", got, again)
			}
			seen := map[int]bool{}
			for _, i := range got {
				if seen[i] {
					t.Fatalf("example %d chosen twice", i)
				}
				seen[i] = true
			}
			if tc.cfg.Strategy == SelectNLS {
				// The structures of the 9 (quantifier, entity) combinations
				// and the rare example are all covered within 10 picks: nls
				// always prefers a structure with similarity 0 to the selection.
				m, _ := structure.Train(pool, structure.DefaultConfig())
				have := map[structure.Structure]bool{}
				for _, i := range got {
					for _, s := range m.Structures(m.Graph(pool[i])) {
						have[s] = true
					}
				}
				if !seen[60] {
					t.Fatalf("rare example not selected: %v", got)
				}
				for _, q := range qs {
					if !have[m.Structures(m.Graph(tn(q, tn("find"))))[0]] {
						t.Fatalf("quantifier %s not covered", q)
					}
				}
			}
		})
	}
}
