package structure

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"compbench/data"
)

func mustTree(t testing.TB, s string) *data.Tree {
	t.Helper()
	tr, err := ParseBracketed(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func weights(ix *Index, e int) map[string]float64 {
	m := map[string]float64{}
	for _, c := range ix.Examples[e].Compounds {
		m[ix.Compounds[c.ID]] = c.W
	}
	return m
}

func TestEnumerateCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		tree string
		k    int
		want int
	}{
		{"leaf", "a", 3, 0},
		{"fan of 3, k=3", "a(b, c, d)", 3, 6},   // 3 pairs + 3 parent-with-two-children
		{"chain of 4, k=3", "a(b(c(d)))", 3, 5}, // 3 edges + 2 paths of 3
		{"chain of 4, k=4", "a(b(c(d)))", 4, 6},
		{"fan of 3, k=4", "a(b, c, d)", 4, 7},
		{"mixed, k=3", "a(b(c), d)", 3, 3 + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids := map[string]int32{}
			var atoms []string
			f := flatten(mustTree(t, tc.tree), ids, &atoms)
			var sc scratch
			sc.subtrees(&f, tc.k, newTypeTable(&atoms), true)
			got := 0
			for _, e := range sc.elems {
				if e.size >= 2 {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("got %d subtrees, want %d", got, tc.want)
			}
		})
	}
}

// TestWeights checks Keysers et al. App. L.4 weights on a pool computed by
// hand: a(b) occurs twice, once inside a(b(c)), so P(a(b(c)) | a(b)) = 0.5.
func TestWeights(t *testing.T) {
	trees := []*data.Tree{mustTree(t, "a(b(c))"), mustTree(t, "a(b)"), mustTree(t, "x(b(c))")}
	ix, err := Build(trees, CompoundConfig{}, nil) // every compound kept
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]float64{
		{"a(b)": 0.5, "b(c)": 0.5, "a(b(c))": 1},
		{"a(b)": 1},
		{"x(b)": 0, "b(c)": 0.5, "x(b(c))": 1},
	}
	for e := range want {
		got := weights(ix, e)
		if len(got) != len(want[e]) {
			t.Errorf("tree %d: compounds %v, want %v", e, got, want[e])
		}
		for k, w := range want[e] {
			if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-12 {
				t.Errorf("tree %d: weight of %s = %v (present %v), want %v", e, k, g, ok, w)
			}
		}
	}
	// Train = tree 0, test = trees 1 and 2. By hand:
	// F_C(train) = (a(b) .25, b(c) .25, a(b(c)) .5); F_C(test) = (a(b) .4,
	// b(c) .2, x(b(c)) .4, x(b) 0): C_0.1 = .25^.1 .4^.9 + .25^.1 .2^.9.
	train, test := []int{0}, []int{1, 2}
	dc := Divergence(ix.CompoundDist(train, true), ix.CompoundDist(test, true), CompoundAlpha)
	if want := 1 - 0.5861478570441834; math.Abs(dc-want) > 1e-12 {
		t.Errorf("weighted D_C = %v, want %v", dc, want)
	}
	// F_A(train) = (a, b, c) 1/3 each; F_A(test) = (a .2, b .4, c .2, x .2).
	da := Divergence(ix.AtomDist(train), ix.AtomDist(test), AtomAlpha)
	if want := 1 - 0.8815461511644329; math.Abs(da-want) > 1e-12 {
		t.Errorf("D_A = %v, want %v", da, want)
	}
	// Unweighted: train (a(b), b(c), a(b(c))) 1/3 each; test a(b), x(b),
	// b(c), x(b(c)) 1/4 each; shared a(b), b(c): 2 (1/3)^.1 (1/4)^.9.
	du := Divergence(ix.CompoundDist(train, false), ix.CompoundDist(test, false), CompoundAlpha)
	if want := 1 - 2*math.Pow(1.0/3, 0.1)*math.Pow(0.25, 0.9); math.Abs(du-want) > 1e-12 {
		t.Errorf("unweighted D_C = %v, want %v", du, want)
	}
}

func TestCompoundTextSlots(t *testing.T) {
	ix, err := Build([]*data.Tree{mustTree(t, "f(a, g(b), c)")}, CompoundConfig{MaxSize: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := weights(ix, 0)
	for _, k := range []string{"f(a, _, _)", "f(_, g, _)", "f(_, _, c)", "g(b)"} {
		if _, ok := got[k]; !ok {
			t.Errorf("missing compound %s in %v", k, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d compounds, want 4: %v", len(got), got)
	}
}

func TestChernoff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a, b  []float64
		alpha float64
		want  float64
	}{
		{"identical", []float64{1, 2, 3}, []float64{2, 4, 6}, 0.1, 1},
		{"disjoint", []float64{1, 0}, []float64{0, 1}, 0.5, 0},
		{"half", []float64{1, 1}, []float64{1, 0}, 0.5, math.Sqrt(0.5)},
		{"alpha weights", []float64{1, 1}, []float64{1, 0}, 0.1, math.Pow(0.5, 0.1)},
		{"empty side", []float64{0, 0}, []float64{1, 0}, 0.5, 0},
		{"ragged", []float64{1}, []float64{1, 1}, 0.5, math.Sqrt(0.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Chernoff(tc.a, tc.b, tc.alpha); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build([]*data.Tree{nil}, DefaultCompoundConfig(), nil); err == nil {
		t.Error("nil tree accepted")
	}
	if _, err := Build(nil, CompoundConfig{MaxSize: 1}, nil); err == nil {
		t.Error("MaxSize 1 accepted")
	}
}

func TestAutoMaxSize(t *testing.T) {
	chain := func(n int) *data.Tree { // n nodes in a line
		tr := &data.Tree{Label: "x"}
		for i := 1; i < n; i++ {
			tr = &data.Tree{Label: "x", Children: []*data.Tree{tr}}
		}
		return tr
	}
	fan := func(n int) *data.Tree { // a root with n leaves
		tr := &data.Tree{Label: "r"}
		for i := 0; i < n; i++ {
			tr.Children = append(tr.Children, &data.Tree{Label: "l"})
		}
		return tr
	}
	for _, tc := range []struct {
		name string
		tree *data.Tree
		want int
	}{
		// A chain of 15 has 16-s paths of s nodes: sizes 2..10 sum to 90.
		{"chain of 15 takes the cap", chain(15), AutoSizeCap},
		// A fan of 12: 12 + 66 + 220 + 495 subtrees of 2..5 nodes (793)
		// fit in AutoPerTree (1000); with 792 of 6 nodes they do not.
		{"fan of 12 stops at 5", fan(12), 5},
		{"short chain takes the cap", chain(5), AutoSizeCap},
		// A fan of 20 has C(20, s-1) subtrees of s nodes: 20 + 190 > 96.
		{"bushy tree falls back to 3", fan(20), 3},
		{"fan of 6: all 63 subtrees fit", fan(6), AutoSizeCap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AutoMaxSize([]*data.Tree{tc.tree}); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

// TestCompoundKeysMatchTexts checks that the binary keys compounds are
// counted by and their canonical texts agree: no two ids share a text.
func TestCompoundKeysMatchTexts(t *testing.T) {
	trees := []*data.Tree{mustTree(t, "f(a, g(b), c)"), mustTree(t, "f(a, g, c)"), mustTree(t, "f(g(b), a)"),
		mustTree(t, "g(b(c), b)"), mustTree(t, "g(b, b(c))")}
	ix, err := Build(trees, CompoundConfig{MaxSize: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range ix.Compounds {
		if seen[c] {
			t.Errorf("compound %s has two ids", c)
		}
		seen[c] = true
	}
	if !seen["g(b, b)"] || !seen["g(b(c), _)"] || !seen["g(_, b(c))"] {
		t.Errorf("missing compounds in %v", ix.Compounds)
	}
}

func TestKeepHeaviest(t *testing.T) {
	trees := []*data.Tree{mustTree(t, "a(b(c))"), mustTree(t, "a(b)"), mustTree(t, "x(b(c))"), mustTree(t, "a(b)")}
	all, err := Build(trees, CompoundConfig{MaxSize: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Build(trees, CompoundConfig{MaxSize: 3, Keep: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The kept compounds are the heaviest in total, with unchanged weights.
	total := map[string]float64{}
	for e := range trees {
		for k, w := range weights(all, e) {
			total[k] += w
		}
	}
	if len(kept.Compounds) != 2 {
		t.Fatalf("kept %v", kept.Compounds)
	}
	for _, c := range kept.Compounds {
		for k, w := range total {
			if w > total[c]+1e-12 && !contains(kept.Compounds, k) {
				t.Errorf("kept %s (%v) over heavier %s (%v)", c, total[c], k, w)
			}
		}
	}
	for e := range trees {
		for k, w := range weights(kept, e) {
			if w != weights(all, e)[k] {
				t.Errorf("tree %d: %s weighs %v kept, %v in full", e, k, w, weights(all, e)[k])
			}
		}
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// TestAtomDistCounts checks both readings of F_A on a(b, b), which holds b
// twice: per example (the default) b counts once, per occurrence twice.
func TestAtomDistCounts(t *testing.T) {
	for _, tc := range []struct {
		atoms string
		b     float64 // F_A(a(b, b))[b]
		da    float64 // D_A(a(b, b) || b)
	}{
		// F_A(train) = (a 1/2, b 1/2), F_A(test) = (b 1): C_0.5 = sqrt(1/2).
		{"", 1, 1 - math.Sqrt(0.5)},
		{AtomsPerExample, 1, 1 - math.Sqrt(0.5)},
		// F_A(train) = (a 1/3, b 2/3), F_A(test) = (b 1): C_0.5 = sqrt(2/3).
		{AtomsPerOccurrence, 2, 1 - math.Sqrt(2.0/3)},
	} {
		t.Run("atoms="+tc.atoms, func(t *testing.T) {
			ix, err := Build([]*data.Tree{mustTree(t, "a(b, b)"), mustTree(t, "b")}, CompoundConfig{MaxSize: 2, Atoms: tc.atoms}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for id, w := range ix.AtomDist([]int{0}) {
				got[ix.Atoms[id]] = w
			}
			if got["a"] != 1 || got["b"] != tc.b {
				t.Errorf("F_A(a(b, b)) = %v, want a 1, b %v", got, tc.b)
			}
			da := Divergence(ix.AtomDist([]int{0}), ix.AtomDist([]int{1}), AtomAlpha)
			if math.Abs(da-tc.da) > 1e-12 {
				t.Errorf("D_A = %v, want %v", da, tc.da)
			}
		})
	}
	if _, err := Build(nil, CompoundConfig{Atoms: "twice"}, nil); err == nil {
		t.Error("Atoms \"twice\" accepted")
	}
}

// TestWeightsAcrossOccurrences checks the two maxima of the weight on a pool
// where a(b) occurs 4 times (MaxSize 3): 3 times inside a(b(c)) and once
// each inside r(a(b), _), r(_, a(b)) and s(a(b)), so P(a(b(c)) | a(b)) =
// 3/4 and every other supergraph has 1/4.
//   - An occurrence uses its most frequent supergraph present: in s(a(b(c)))
//     that is a(b(c)), weight 1 - 3/4 = 1/4 (not s(a(b)), 1 - 1/4).
//   - A tree takes the largest weight of its occurrences: in
//     r(a(b), a(b(c))) the first a(b) lies only in r(a(b), _) (weight 3/4),
//     the second in a(b(c)) (1/4), so the tree's weight is 3/4.
func TestWeightsAcrossOccurrences(t *testing.T) {
	trees := []*data.Tree{mustTree(t, "a(b(c))"), mustTree(t, "r(a(b), a(b(c)))"), mustTree(t, "s(a(b(c)))")}
	ix, err := Build(trees, CompoundConfig{MaxSize: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tree int
		want float64
	}{
		{"one supergraph", 0, 0.25},
		{"max over occurrences", 1, 0.75},
		{"most frequent supergraph", 2, 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := weights(ix, tc.tree)["a(b)"]; math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("weight of a(b) in %s = %v, want %v", trees[tc.tree], got, tc.want)
			}
		})
	}
}

// TestKeepHeaviestTies checks the documented tie-break: of equal total
// weights the smaller canonical text stays, whatever the id order.
func TestKeepHeaviestTies(t *testing.T) {
	// Neither compound has a supergraph: both weigh 1 in total.
	for _, tc := range []struct {
		name  string
		trees []string
	}{
		{"smaller text first", []string{"a(b)", "c(d)"}},
		{"smaller text second", []string{"c(d)", "a(b)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trees []*data.Tree
			for _, s := range tc.trees {
				trees = append(trees, mustTree(t, s))
			}
			ix, err := Build(trees, CompoundConfig{MaxSize: 2, Keep: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(ix.Compounds) != 1 || ix.Compounds[0] != "a(b)" {
				t.Errorf("kept %v, want [a(b)]", ix.Compounds)
			}
		})
	}
}

// refWeights computes the index by brute force from node sets and texts:
// every connected node set of 2..k nodes, its one-node supersets, P(G'|G)
// over the pool, and per tree the largest occurrence weight. It shares no
// code with Build but the canonical text's rules.
func refWeights(trees []*data.Tree, k int, all bool) []map[string]float64 {
	type tree struct {
		label    []string
		parent   []int
		children [][]int
	}
	flat := func(t *data.Tree) tree {
		var f tree
		var walk func(t *data.Tree, p int)
		walk = func(t *data.Tree, p int) {
			i := len(f.label)
			f.label = append(f.label, t.Label)
			f.parent = append(f.parent, p)
			f.children = append(f.children, nil)
			if p >= 0 {
				f.children[p] = append(f.children[p], i)
			}
			for _, c := range t.Children {
				walk(c, i)
			}
		}
		walk(t, -1)
		return f
	}
	text := func(f tree, set map[int]bool) string {
		var w func(n int) string
		w = func(n int) string {
			s := quoteLabel(f.label[n])
			open := false
			for _, c := range f.children[n] {
				open = open || set[c]
			}
			if !open {
				return s
			}
			var parts []string
			for _, c := range f.children[n] {
				if set[c] {
					parts = append(parts, w(c))
				} else {
					parts = append(parts, "_")
				}
			}
			return s + "(" + strings.Join(parts, ", ") + ")"
		}
		for n := range set {
			if f.parent[n] < 0 || !set[f.parent[n]] {
				return w(n)
			}
		}
		return ""
	}
	type occ struct {
		g      string
		supers map[string]bool
	}
	perTree := make([][]occ, len(trees))
	count := map[string]int{}
	pair := map[[2]string]int{}
	for ti, t := range trees {
		f := flat(t)
		n := len(f.label)
		valid := map[int]bool{} // connected node sets of 1..k nodes
		for mask := 1; mask < 1<<n; mask++ {
			tops, size := 0, 0
			for i := 0; i < n; i++ {
				if mask&(1<<i) != 0 {
					size++
					if f.parent[i] < 0 || mask&(1<<f.parent[i]) == 0 {
						tops++
					}
				}
			}
			valid[mask] = tops == 1 && size <= k
		}
		for mask := 1; mask < 1<<n; mask++ {
			set := map[int]bool{}
			tops := 0
			for i := 0; i < n; i++ {
				if mask&(1<<i) != 0 {
					set[i] = true
				}
			}
			for i := range set {
				if f.parent[i] < 0 || !set[f.parent[i]] {
					tops++
				}
			}
			if tops != 1 || len(set) < 2 || len(set) > k {
				continue
			}
			o := occ{g: text(f, set), supers: map[string]bool{}}
			if all {
				for sup := 1; sup < 1<<n; sup++ {
					if sup != mask && sup&mask == mask && valid[sup] {
						ss := map[int]bool{}
						for i := 0; i < n; i++ {
							if sup&(1<<i) != 0 {
								ss[i] = true
							}
						}
						o.supers[text(f, ss)] = true
					}
				}
			} else if len(set) < k {
				for u := 0; u < n; u++ {
					if set[u] {
						continue
					}
					// u joins the set as a child of a member, or as the
					// parent of its top node.
					adj := f.parent[u] >= 0 && set[f.parent[u]]
					for i := range set {
						if (f.parent[i] < 0 || !set[f.parent[i]]) && f.parent[i] == u {
							adj = true
						}
					}
					if !adj {
						continue
					}
					set[u] = true
					o.supers[text(f, set)] = true
					delete(set, u)
				}
			}
			count[o.g]++
			for s := range o.supers {
				pair[[2]string{o.g, s}]++
			}
			perTree[ti] = append(perTree[ti], o)
		}
	}
	out := make([]map[string]float64, len(trees))
	for ti := range trees {
		out[ti] = map[string]float64{}
		for _, o := range perTree[ti] {
			best := 0.0
			for s := range o.supers {
				best = math.Max(best, float64(pair[[2]string{o.g, s}])/float64(count[o.g]))
			}
			if w, ok := out[ti][o.g]; !ok || 1-best > w {
				out[ti][o.g] = 1 - best
			}
		}
	}
	return out
}

// TestBuildMatchesBruteForce: on random small trees (labels from a few, so
// compounds recur in many contexts), Build's compounds and weights equal
// the brute-force reference's for several sizes, over one-node and over
// all supergraphs.
func TestBuildMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var gen func(depth int) *data.Tree
	gen = func(depth int) *data.Tree {
		tr := &data.Tree{Label: string(rune('a' + rng.IntN(3)))}
		if depth > 0 {
			for range rng.IntN(4) {
				tr.Children = append(tr.Children, gen(depth-1))
			}
		}
		return tr
	}
	var size func(t *data.Tree) int
	size = func(t *data.Tree) int {
		n := 1
		for _, c := range t.Children {
			n += size(c)
		}
		return n
	}
	var trees []*data.Tree
	for len(trees) < 40 {
		tr := gen(3)
		if n := size(tr); n <= 12 {
			trees = append(trees, tr)
		}
	}
	trees = append(trees, mustTree(t, "r(a(b), a(b))"), mustTree(t, "f(a, g, c, d, e)"), mustTree(t, "f(a(b), g, c, d(e), e)"))
	for _, tc := range []struct {
		k      int
		supers string
	}{{2, SupersOneNode}, {3, SupersOneNode}, {5, SupersOneNode}, {3, SupersAll}, {5, SupersAll}} {
		k := tc.k
		ix, err := Build(trees, CompoundConfig{MaxSize: k, Supergraphs: tc.supers}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Supergraphs != tc.supers {
			t.Errorf("index says supergraphs %q, want %q", ix.Supergraphs, tc.supers)
		}
		want := refWeights(trees, k, tc.supers == SupersAll)
		for e := range trees {
			got := weights(ix, e)
			if len(got) != len(want[e]) {
				t.Fatalf("k %d tree %v: compounds %v, want %v", k, trees[e], got, want[e])
			}
			for c, w := range want[e] {
				if g, ok := got[c]; !ok || math.Abs(g-w) > 1e-12 {
					t.Errorf("k %d tree %v: %s weighs %v (present %v), want %v", k, trees[e], c, g, ok, w)
				}
			}
		}
	}
}

// TestKeepAuto: KeepAuto keeps the fewest heaviest compounds holding
// AutoKeepWeight of the total weight, with their weights unchanged.
func TestKeepAuto(t *testing.T) {
	var trees []*data.Tree
	for _, s := range []string{"a(b(c), d)", "a(b(c))", "x(b(c), d(e))", "a(d(e))", "x(b, d)", "a(b(c), d(e))"} {
		trees = append(trees, mustTree(t, s))
	}
	all, err := Build(trees, CompoundConfig{MaxSize: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := Build(trees, CompoundConfig{MaxSize: 4, Keep: KeepAuto}, nil)
	if err != nil {
		t.Fatal(err)
	}
	total, sum := map[string]float64{}, 0.0
	for e := range trees {
		for k, w := range weights(all, e) {
			total[k] += w
			sum += w
		}
	}
	kept := 0.0
	lightestKept := math.Inf(1)
	for _, c := range auto.Compounds {
		kept += total[c]
		lightestKept = math.Min(lightestKept, total[c])
	}
	if kept < AutoKeepWeight*sum-1e-9 || auto.Keep != len(auto.Compounds) {
		t.Errorf("kept %d compounds holding %.3f of %.3f", auto.Keep, kept, sum)
	}
	// Minimal: without the lightest kept compound (and its ties) the rest
	// would fall short.
	ties := 0.0
	for _, c := range auto.Compounds {
		if total[c] == lightestKept {
			ties += total[c]
		}
	}
	if kept-ties >= AutoKeepWeight*sum {
		t.Errorf("kept more than needed: %.3f without the lightest of %.3f", kept-ties, sum)
	}
	for e := range trees {
		for k, w := range weights(auto, e) {
			if w != weights(all, e)[k] {
				t.Errorf("tree %d: %s weighs %v kept, %v in full", e, k, w, weights(all, e)[k])
			}
		}
	}
}

// TestSupergraphsAuto: the automatic choice weighs over every supergraph on
// trees with few subtrees and over one-node supergraphs on bushy ones.
func TestSupergraphsAuto(t *testing.T) {
	fan := &data.Tree{Label: "r"}
	for range 20 {
		fan.Children = append(fan.Children, &data.Tree{Label: "l"})
	}
	for _, tc := range []struct {
		tree *data.Tree
		k    int
		want string
	}{{mustTree(t, "a(b(c(d)))"), 4, SupersAll}, {fan, 4, SupersOneNode}} {
		ix, err := Build([]*data.Tree{tc.tree}, CompoundConfig{MaxSize: tc.k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Supergraphs != tc.want {
			t.Errorf("%v: supergraphs %q, want %q", tc.tree, ix.Supergraphs, tc.want)
		}
	}
}
