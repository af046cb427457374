package structure

import (
	"math"
	"slices"
	"testing"

	"compbench/data"
)

// n builds a tree node for tests (no parser needed).
func n(label string, ch ...*data.Tree) *data.Tree { return &data.Tree{Label: label, Children: ch} }

// fig2 is count(with_relation(find(dog), chasing, find(cat))), a COVR
// program in the style of the paper's Fig. 2.
func fig2() *data.Tree {
	return n("count", n("with_relation", n("find", n("dog")), n("chasing"), n("find", n("cat"))))
}

func extractAll(t *data.Tree, size int, k Kinds) []string {
	syms := NewSymbols()
	g := NewGraph(t, syms)
	var out []string
	g.Extract(size, k, func(s Structure) {
		str := s.Format(syms)
		if !slices.Contains(out, str) {
			out = append(out, str)
		}
	})
	slices.Sort(out)
	return out
}

func TestExtractFig2(t *testing.T) {
	want2 := []string{
		"pc(<s>, count)", "pc(count, with_relation)", "pc(find, cat)", "pc(find, dog)",
		"pc(with_relation, chasing)", "pc(with_relation, find)",
		"sib(chasing, find)", "sib(find, chasing)",
	}
	slices.Sort(want2)
	got := extractAll(fig2(), 2, Both)
	if !slices.Equal(got, want2) {
		t.Fatalf("2-LS:\n got %q\nwant %q", got, want2)
	}
	want3extra := []string{
		"pc2(<s>, count, with_relation)", "pc2(count, with_relation, chasing)",
		"pc2(count, with_relation, find)", "pc2(with_relation, find, cat)",
		"pc2(with_relation, find, dog)", "psib(with_relation, chasing, find)",
		"psib(with_relation, find, chasing)", "sib3(find, chasing, find)",
	}
	want4extra := []string{
		"gpsib(count, with_relation, chasing, find)", "gpsib(count, with_relation, find, chasing)",
		"pc3(<s>, count, with_relation, chasing)", "pc3(<s>, count, with_relation, find)",
		"pc3(count, with_relation, find, cat)", "pc3(count, with_relation, find, dog)",
		"psib3(with_relation, find, chasing, find)",
	}
	for _, tc := range []struct {
		name string
		size int
		k    Kinds
		want []string
	}{
		{"3-LS", 3, Both, append(slices.Clone(want2), want3extra...)},
		{"4-LS", 4, Both, append(append(slices.Clone(want2), want3extra...), want4extra...)},
		{"2-LS-nosib", 2, ParentChild, want2[:6]},
		{"2-LS-nopc", 2, Siblings, want2[6:]},
		{"3-LS-nosib", 3, ParentChild, []string{"pc(<s>, count)", "pc(count, with_relation)", "pc(find, cat)",
			"pc(find, dog)", "pc(with_relation, chasing)", "pc(with_relation, find)",
			"pc2(<s>, count, with_relation)", "pc2(count, with_relation, chasing)",
			"pc2(count, with_relation, find)", "pc2(with_relation, find, cat)", "pc2(with_relation, find, dog)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.want)
			slices.Sort(want)
			got := extractAll(fig2(), tc.size, tc.k)
			if !slices.Equal(got, want) {
				t.Fatalf("\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestExtractFan checks the sibling shapes of Fig. 6 on r(a, b, c, d), whose
// four children give every sibling run up to sib4: that 3-LS stops at three
// nodes, and which shapes the NOSIB and NOPC ablations keep (psib3 and gpsib
// use both edge kinds).
func TestExtractFan(t *testing.T) {
	fan := n("r", n("a"), n("b"), n("c"), n("d"))
	pc := []string{"pc(<s>, r)", "pc(r, a)", "pc(r, b)", "pc(r, c)", "pc(r, d)",
		"pc2(<s>, r, a)", "pc2(<s>, r, b)", "pc2(<s>, r, c)", "pc2(<s>, r, d)"}
	sib := []string{"sib(a, b)", "sib(b, c)", "sib(c, d)", "sib3(a, b, c)", "sib3(b, c, d)", "sib4(a, b, c, d)"}
	both := []string{"psib(r, a, b)", "psib(r, b, c)", "psib(r, c, d)", "psib3(r, a, b, c)", "psib3(r, b, c, d)",
		"gpsib(<s>, r, a, b)", "gpsib(<s>, r, b, c)", "gpsib(<s>, r, c, d)"}
	for _, tc := range []struct {
		name string
		size int
		k    Kinds
		want []string
	}{
		{"4-LS", 4, Both, append(append(slices.Clone(pc), sib...), both...)},
		{"3-LS", 3, Both, []string{"pc(<s>, r)", "pc(r, a)", "pc(r, b)", "pc(r, c)", "pc(r, d)",
			"pc2(<s>, r, a)", "pc2(<s>, r, b)", "pc2(<s>, r, c)", "pc2(<s>, r, d)",
			"sib(a, b)", "sib(b, c)", "sib(c, d)", "sib3(a, b, c)", "sib3(b, c, d)",
			"psib(r, a, b)", "psib(r, b, c)", "psib(r, c, d)"}},
		{"4-LS-nosib", 4, ParentChild, pc},
		{"4-LS-nopc", 4, Siblings, sib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if got := extractAll(fan, tc.size, tc.k); !slices.Equal(got, want) {
				t.Fatalf("\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestJaccard checks |A∩B| / |A∪B| where the union differs from the larger
// set (a max-based overlap would give 1/2 for the first case).
func TestJaccard(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []int32
		want float64
	}{
		{"one shared of three", []int32{1, 2}, []int32{2, 3}, 1.0 / 3},
		{"subset", []int32{1, 2}, []int32{1, 2, 3}, 2.0 / 3},
		{"disjoint", []int32{1}, []int32{2}, 0},
		{"one side empty", nil, []int32{2}, 0},
		{"identical", []int32{1, 4}, []int32{1, 4}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jaccard(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("got %v want %v", got, tc.want)
			}
		})
	}
}

func TestGraphRootNotDoubled(t *testing.T) {
	syms := NewSymbols()
	g := NewGraph(n(Root, n("a")), syms)
	if len(g.Label) != 2 || syms.Name(g.Label[0]) != Root {
		t.Fatalf("graph labels %v", g.Label)
	}
}

func TestNGrams(t *testing.T) {
	syms := NewSymbols()
	g := NewGraph(n("a", n("b"), n("c")), syms)
	var got []string
	ExtractNGrams(g.Sequence(), 3, func(s Structure) { got = append(got, s.Format(syms)) })
	want := []string{"ngram(<s>, a, b)", "ngram(a, b, c)"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q want %q", got, want)
	}
}

// fig3 builds training programs in which exists and most have the same
// parents {<s>, or, and} and children sharing 2 of 3 ({find, filter} vs
// {find, filter, with_relation}), never with siblings (paper Fig. 3).
func fig3() []*data.Tree {
	return []*data.Tree{
		n("exists", n("find", n("dog"))),
		n("or", n("exists", n("filter", n("white")))),
		n("and", n("exists", n("find", n("cat")))),
		n("most", n("find", n("dog"))),
		n("or", n("most", n("filter", n("white")))),
		n("and", n("most", n("with_relation", n("dog")))),
	}
}

func TestSymbolSimilarityFig3(t *testing.T) {
	for _, v := range []Variant{Full, NoSib} {
		t.Run(string(v), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Variant = v
			m, err := Train(fig3(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ex, _ := m.Symbols().Lookup("exists")
			mo, _ := m.Symbols().Lookup("most")
			cx := m.Contexts()
			if got := jaccard(cx.Set(Parents, ex), cx.Set(Parents, mo)); got != 1 {
				t.Errorf("parent similarity %v, want 1", got)
			}
			if got := jaccard(cx.Set(Children, ex), cx.Set(Children, mo)); math.Abs(got-2.0/3) > 1e-9 {
				t.Errorf("children similarity %v, want 0.667", got)
			}
			if got := cx.Sim(ex, mo); math.Abs(got-5.0/6) > 1e-6 {
				t.Errorf("sim(exists, most) = %v, want 0.833", got)
			}
			if got := cx.Sim(ex, ex); got != 1 {
				t.Errorf("self similarity %v", got)
			}
		})
	}
}

func TestSymbolSimilarityCases(t *testing.T) {
	// a and b: a has left sibling x only, b has none of any kind.
	m, err := Train([]*data.Tree{n("p", n("x"), n("a")), n("q", n("b"))}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) int32 { i, _ := m.Symbols().Lookup(s); return i }
	cx := m.Contexts()
	// x: parents {p}, right {a}; a: parents {p}, left {x}.
	// parent-child: parents 1 (children empty for both, left out) -> 1;
	// siblings: left ({} vs {x}) 0, right ({a} vs {}) 0 -> 0; mean 1/2.
	if got := cx.Sim(id("x"), id("a")); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("sim(x, a) = %v, want 1/2", got)
	}
	if got := cx.Sim(id("a"), id("b")); got != 0 {
		t.Errorf("sim(a, b) = %v, want 0", got)
	}
	if got := cx.Sim(id("p"), id("q")); math.Abs(got-0.5) > 1e-6 {
		t.Errorf("sim(p, q) = %v, want 0.5", got)
	}
	unseen := m.Symbols().ID("never-seen")
	if got := cx.Sim(unseen, id("a")); got != 0 {
		t.Errorf("unseen symbol similarity %v", got)
	}
}

func TestStructureSim(t *testing.T) {
	m, err := Train(fig3(), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) int32 { i, _ := m.Symbols().Lookup(s); return i }
	cx := m.Contexts()
	a := st(PC, id("or"), id("exists"))
	for _, tc := range []struct {
		name string
		b    Structure
		want float64
	}{
		{"identical", a, 1},
		{"one node differs", st(PC, id("or"), id("most")), cx.Sim(id("exists"), id("most"))},
		{"two nodes differ", st(PC, id("and"), id("most")), 0},
		{"other shape", st(Sib, id("or"), id("exists")), 0},
		{"other size", st(PC2, id("or"), id("exists"), id("find")), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := cx.StructureSim(a, tc.b); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
}
