package structure

import (
	"math"
	"testing"

	"compbench/data"
)

// Train: f(x), g(x), f(y). Contexts: f parents {<s>} children {x, y};
// g parents {<s>} children {x}; x parents {f, g}; y parents {f}.
func smallTrain() []*data.Tree {
	return []*data.Tree{n("f", n("x")), n("g", n("x")), n("f", n("y"))}
}

func TestEasinessSmall(t *testing.T) {
	for _, tc := range []struct {
		name    string
		variant Variant
		test    *data.Tree
		want    float64
		unobs   []string
	}{
		// (g, y) unobserved; swapping g->f gives the observed (f, y) with
		// sim(g, f) = mean(parents 1, children 1/2) = 0.75; swapping
		// y->x gives (g, x) with sim(y, x) = parents 1/2 -> max 0.75.
		{"similar", Full, n("g", n("y")), 0.75, []string{"pc(g, y)"}},
		{"nosim", NoSim, n("g", n("y")), 0, []string{"pc(g, y)"}},
		{"all observed", Full, n("f", n("x")), 1, nil},
		{"unseen symbol", Full, n("h", n("x")), 0, []string{"pc(<s>, h)", "pc(h, x)"}},
		// nosib: same contexts minus siblings (none here) -> same score.
		{"nosib", NoSib, n("g", n("y")), 0.75, []string{"pc(g, y)"}},
		// nopc: no sibling pairs at all -> nothing unobserved.
		{"nopc", NoPC, n("g", n("y")), 1, nil},
		// length: 2 symbols, longest training program 2 -> max(1-1, 0).
		{"length", Length, n("g", n("y")), 0, nil},
		// 1 symbol: 1 - 1/2.
		{"length short", Length, n("f"), 0.5, nil},
		// 3 symbols: 1 - 3/2 < 0 is clamped to 0.
		{"length clamps at 0", Length, n("f", n("x", n("y"))), 0, nil},
		// An explicit <s> root is not a program symbol: 1 - 1/2.
		{"length ignores <s>", Length, n(Root, n("f")), 0.5, nil},
		// pc(g, y) occurs twice but is listed once; sib(y, y) has no
		// observed sibling structure to borrow from (0), so comes first.
		{"repeated structure listed once", Full, n("g", n("y"), n("y")), 0, []string{"sib(y, y)", "pc(g, y)"}},
		// Three unobserved structures of easiness 0 (zz and aa are new):
		// ties are listed by text, not by symbol id (zz was interned first),
		// so the listing does not depend on what was scored before.
		{"ties by text", Full, n("f", n("zz"), n("aa")), 0, []string{"pc(f, aa)", "pc(f, zz)", "sib(zz, aa)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Variant = tc.variant
			m, err := Train(smallTrain(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := m.Score([]*data.Tree{tc.test})[0]
			if math.Abs(r.Easiness-tc.want) > 1e-6 {
				t.Fatalf("easiness %v want %v", r.Easiness, tc.want)
			}
			if len(r.Unobserved) != len(tc.unobs) {
				t.Fatalf("unobserved %v want %v", r.Unobserved, tc.unobs)
			}
			for i, u := range r.Unobserved {
				if u.Structure != tc.unobs[i] {
					t.Fatalf("unobserved %v want %v", r.Unobserved, tc.unobs)
				}
			}
			if got := m.ScoreTree(tc.test); tc.variant != Random && math.Abs(got-r.Easiness) > 1e-9 {
				t.Fatalf("ScoreTree %v, Score %v", got, r.Easiness)
			}
		})
	}
}

func TestEasinessBigram(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Variant = Bigram
	// Sequences: <s> f x, <s> g x, <s> f y. Test <s> g y: bigram (g, y)
	// unobserved; g's right {x}, f's right {x, y}, both left {<s>}:
	// sim(g, f) = (1 + 1/2)/2 = 0.75; y->x: left {f} vs {f, g} = 1/2.
	m, err := Train(smallTrain(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Score([]*data.Tree{n("g", n("y"))})[0].Easiness; math.Abs(got-0.75) > 1e-6 {
		t.Fatalf("bigram easiness %v want 0.75", got)
	}
}

func TestEasinessRandomDeterministic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Variant = Random
	a, _ := Train(smallTrain(), cfg)
	b, _ := Train(smallTrain(), cfg)
	tr := []*data.Tree{n("f"), n("g"), n("h")}
	ra, rb := a.Score(tr), b.Score(tr)
	for i := range ra {
		if ra[i].Easiness != rb[i].Easiness || ra[i].Easiness < 0 || ra[i].Easiness >= 1 {
			t.Fatalf("random easiness %v vs %v", ra[i].Easiness, rb[i].Easiness)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"default", DefaultConfig(), true},
		{"n=5", Config{N: 5, Variant: Full}, false},
		{"n=1", Config{N: 1, Variant: Full}, false},
		{"bad variant", Config{N: 2, Variant: "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v", err)
			}
		})
	}
}

// randomTree draws a small tree over a few symbols.
func randomTree(r interface{ IntN(int) int }, depth int) *data.Tree {
	labels := []string{"and", "or", "exists", "most", "find", "filter", "dog", "cat", "white"}
	t := &data.Tree{Label: labels[r.IntN(len(labels))]}
	if depth > 0 {
		for range r.IntN(3) {
			t.Children = append(t.Children, randomTree(r, depth-1))
		}
	}
	return t
}

// TestNoSimNeverAboveFull checks the ablation's defining property on
// random programs for every n.
func TestNoSimNeverAboveFull(t *testing.T) {
	r := data.NewRand(7)
	var train, test []*data.Tree
	for range 40 {
		train = append(train, randomTree(r, 3))
	}
	for range 200 {
		test = append(test, randomTree(r, 3))
	}
	for size := 2; size <= 4; size++ {
		full, _ := Train(train, Config{N: size, Variant: Full})
		nosim, _ := Train(train, Config{N: size, Variant: NoSim})
		rf, rn := full.Score(test), nosim.Score(test)
		for i := range rf {
			if rn[i].Easiness > rf[i].Easiness {
				t.Fatalf("n=%d example %d: nosim %v > full %v", size, i, rn[i].Easiness, rf[i].Easiness)
			}
			if e := rf[i].Easiness; e < 0 || e > 1 {
				t.Fatalf("easiness %v out of range", e)
			}
		}
	}
}

// TestEasinessLastSlot checks that BestSim tries replacing every symbol of
// a structure, the last included. Train p(a), p(b), z(q(a)): sim(q, p) =
// mean(parents {z} vs {<s>} 0, children {a} vs {a, b} 1/2) = 1/4; sim(b, a)
// = parents {p} vs {p, q} = 1/2. For the unobserved pc(q, b), replacing q
// gives the observed pc(p, b) at 1/4 and replacing b gives pc(q, a) at
// 1/2, so the easiness is 1/2.
func TestEasinessLastSlot(t *testing.T) {
	train := []*data.Tree{n("p", n("a")), n("p", n("b")), n("z", n("q", n("a")))}
	for _, tc := range []struct {
		name string
		test *data.Tree
		want float64
	}{
		{"child replaced", n("z", n("q", n("b"))), 0.5},
		// pc(z, p): replacing z finds pc(<s>, p) with sim(z, <s>) = 0;
		// replacing p finds pc(z, q) with sim(p, q) = 1/4.
		{"other child replaced", n("z", n("p", n("a"))), 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Train(train, DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Score([]*data.Tree{tc.test})[0].Easiness; math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("easiness %v want %v", got, tc.want)
			}
		})
	}
}
