package structure

import (
	"math"
	"testing"

	"compbench/data"
)

// averagingTrain is a training set in which averaging the four directional
// Jaccard similarities flat and averaging them per relation type differ:
//
//	<s>(p(x, a)), <s>(q(b))
//
// Contexts (parents, children, left, right):
//
//	p: {<s>}, {x, a}, {}, {}     q: {<s>}, {b}, {}, {}
//	x: {p},   {},     {}, {a}    a: {p},   {},  {x}, {}
//	b: {q},   {},     {}, {}
func averagingTrain() []*data.Tree {
	return []*data.Tree{n("p", n("x"), n("a")), n("q", n("b"))}
}

// TestSymbolSimilarityAveraging pins the two-step mean (within each
// relation type, then over the types) on hand-computed pairs, for every n
// and for the edge-kind ablations, which keep one relation type each.
func TestSymbolSimilarityAveraging(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		variant Variant
		a, b    string
		want    float64
	}{
		// parent-child: parents {p} vs {p} = 1, children empty for both
		// (left out) -> 1. siblings: left {} vs {x} = 0, right {a} vs {}
		// = 0 -> 0. Mean over the two types 1/2 (a flat mean over the
		// three usable directions would give 1/3).
		{"x~a n=2", 2, Full, "x", "a", 0.5},
		{"x~a n=3", 3, Full, "x", "a", 0.5},
		{"x~a n=4", 4, Full, "x", "a", 0.5},
		// parent-child: parents 1, children {x, a} vs {b} = 0 -> 1/2;
		// siblings: all four sets empty, the type is left out -> 1/2.
		{"p~q", 2, Full, "p", "q", 0.5},
		// parent-child: parents {p} vs {q} = 0 -> 0; siblings: left {x}
		// vs {} = 0 -> 0.
		{"a~b", 2, Full, "a", "b", 0},
		{"self", 2, Full, "a", "a", 1},
		// NOSIB keeps parent-child only: parents 1 -> 1.
		{"x~a nosib", 2, NoSib, "x", "a", 1},
		{"x~a nosib n=3", 3, NoSib, "x", "a", 1},
		// NOPC keeps siblings only: left 0, right 0 -> 0.
		{"x~a nopc", 2, NoPC, "x", "a", 0},
		{"x~a nopc n=4", 4, NoPC, "x", "a", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Train(averagingTrain(), Config{N: tc.n, Variant: tc.variant})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := m.Symbols().Lookup(tc.a)
			b, _ := m.Symbols().Lookup(tc.b)
			if got := m.Contexts().Sim(a, b); math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("sim(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := m.Contexts().compute(a, b); a != b && math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("uncached sim(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestEasinessAveraging scores p(a, a) against averagingTrain. Its only
// unobserved structures put a after a as siblings; the best observed
// neighbour swaps the left a for x (p(x, a) was seen), so the easiness is
// sim(a, x): 1/2 with the per-type mean (1/3 with a flat one).
func TestEasinessAveraging(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		variant Variant
		want    float64
		unobs   []string
	}{
		{"n=2", 2, Full, 0.5, []string{"sib(a, a)"}},
		// n=3 adds p above the pair (observed with x in place of the left
		// a): same similarity.
		{"n=3", 3, Full, 0.5, nil},
		{"n=4", 4, Full, 0.5, nil},
		// NOSIB sees only parent-child structures, all observed.
		{"nosib", 2, NoSib, 1, []string{}},
		// NOPC: sim(a, x) over siblings only is 0.
		{"nopc", 2, NoPC, 0, []string{"sib(a, a)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Train(averagingTrain(), Config{N: tc.n, Variant: tc.variant})
			if err != nil {
				t.Fatal(err)
			}
			test := n("p", n("a"), n("a"))
			r := m.Score([]*data.Tree{test})[0]
			if math.Abs(r.Easiness-tc.want) > 1e-9 {
				t.Fatalf("easiness %v, want %v (unobserved %v)", r.Easiness, tc.want, r.Unobserved)
			}
			if tc.unobs != nil {
				var got []string
				for _, u := range r.Unobserved {
					got = append(got, u.Structure)
				}
				if len(got) != len(tc.unobs) {
					t.Fatalf("unobserved %v, want %v", got, tc.unobs)
				}
				for i := range got {
					if got[i] != tc.unobs[i] {
						t.Fatalf("unobserved %v, want %v", got, tc.unobs)
					}
				}
			}
			for _, u := range r.Unobserved {
				if math.Abs(u.Easiness-tc.want) > 1e-9 {
					t.Errorf("%s: easiness %v, want %v", u.Structure, u.Easiness, tc.want)
				}
			}
		})
	}
}
