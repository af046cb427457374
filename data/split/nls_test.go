package split

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

func nlsNode(label string, ch ...*data.Tree) *data.Tree {
	return &data.Tree{Label: label, Children: ch}
}

// nlsPool draws COVR-like programs: a quantifier over find(entity), or
// and/or of two of them.
func nlsPool(n int, seed uint64) []*data.Tree {
	r := data.NewRand(seed)
	qs := []string{"exists", "most", "all", "some", "none"}
	es := []string{"dog", "cat", "mouse", "animal"}
	one := func(r *rand.Rand) *data.Tree {
		f := nlsNode("find", nlsNode(es[r.IntN(len(es))]))
		if r.IntN(2) == 0 {
			f = nlsNode("filter", nlsNode([]string{"white", "black"}[r.IntN(2)]), f)
		}
		return nlsNode(qs[r.IntN(len(qs))], f)
	}
	var out []*data.Tree
	for range n {
		if r.IntN(3) == 0 {
			out = append(out, one(r))
		} else {
			out = append(out, nlsNode([]string{"and", "or"}[r.IntN(2)], one(r), one(r)))
		}
	}
	return out
}

func TestNLSInvariants(t *testing.T) {
	trees := nlsPool(400, 1)
	for _, tc := range []struct {
		name string
		cfg  NLSConfig
	}{
		{"2-LS", DefaultNLSConfig()},
		{"2-LS-nosib", NLSConfig{N: 2, NoSib: true, MaxTestTemplates: 0.3, Tau: 1}},
		{"2-LS-nosib-half", NLSConfig{N: 2, NoSib: true, Half: true, MaxTestTemplates: 0.3, Tau: 1}},
		{"3-LS max 3", NLSConfig{N: 3, MaxTestTemplates: 0.3, Tau: 1, MaxSplits: 3}},
		{"2-LS tau 0.5", NLSConfig{N: 2, MaxTestTemplates: 0.3, Tau: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			splits, err := NLS(trees, tc.cfg, data.NewRand(5), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cfg.MaxSplits > 0 && len(splits) > tc.cfg.MaxSplits {
				t.Fatalf("%d splits > max %d", len(splits), tc.cfg.MaxSplits)
			}
			seen := map[string]bool{}
			for k, sp := range splits {
				if k > 0 && sp.Easiness < splits[k-1].Easiness {
					t.Fatalf("splits not ordered hardest first")
				}
				key := reflectKey(sp.Test)
				if seen[key] {
					t.Fatalf("identical splits not merged")
				}
				seen[key] = true
				checkNLSSplit(t, trees, tc.cfg, sp)
			}
			again, _ := NLS(trees, tc.cfg, data.NewRand(5), nil)
			if !reflect.DeepEqual(splits, again) {
				t.Fatalf("not deterministic")
			}
		})
	}
}

func reflectKey(xs []int) string {
	b := make([]byte, 0, len(xs)*3)
	for _, x := range xs {
		b = append(b, byte(x), byte(x>>8), ',')
	}
	return string(b)
}

func checkNLSSplit(t *testing.T, trees []*data.Tree, cfg NLSConfig, sp NLSSplit) {
	t.Helper()
	if len(sp.Train)+len(sp.Test) != len(trees) || len(sp.Test) == 0 {
		t.Fatalf("split %s does not cover the pool: %d+%d", sp.Seed, len(sp.Train), len(sp.Test))
	}
	isTest := map[int]bool{}
	for _, i := range sp.Test {
		isTest[i] = true
	}
	for _, i := range sp.Train {
		if isTest[i] {
			t.Fatalf("example %d in train and test", i)
		}
	}
	// Held-out structures: every test example has one, no train example does.
	m, _ := structure.Train(nil, cfg.model())
	trainSyms := map[string]bool{}
	for i, tr := range trees {
		var has bool
		for _, s := range m.Structures(m.Graph(tr)) {
			if slices.Contains(sp.HeldOut, s.Format(m.Symbols())) {
				has = true
			}
		}
		if has != isTest[i] {
			t.Fatalf("split %s: example %d (%s) test=%v but holds a held-out structure=%v", sp.Seed, i, tr, isTest[i], has)
		}
		if !isTest[i] {
			tr.Walk(func(n *data.Tree) { trainSyms[n.Label] = true })
		}
	}
	tmpl, testTmpl := map[string]bool{}, map[string]bool{}
	for i, tr := range trees {
		tmpl[tr.String()] = true
		if isTest[i] {
			testTmpl[tr.String()] = true
			tr.Walk(func(n *data.Tree) {
				if !trainSyms[n.Label] {
					t.Fatalf("split %s: test symbol %q not in train", sp.Seed, n.Label)
				}
			})
		}
	}
	if frac := float64(len(testTmpl)) / float64(len(tmpl)); frac > cfg.MaxTestTemplates+1e-12 {
		t.Fatalf("split %s: test template fraction %v > K", sp.Seed, frac)
	}
	if !slices.Contains(sp.HeldOut, sp.Seed) {
		t.Fatalf("seed %s not held out", sp.Seed)
	}
	if sp.Easiness > cfg.Tau {
		t.Fatalf("easiness %v above tau", sp.Easiness)
	}
	checkNLSThreshold(t, trees, cfg, sp)
}

// checkNLSThreshold checks the threshold rule of §6.1: every held-out
// structure but the seed has similarity above the threshold to the seed;
// without Half, they are all such structures of the pool; and no lower
// candidate threshold (0 or a similarity to the seed) gives a valid split.
func checkNLSThreshold(t *testing.T, trees []*data.Tree, cfg NLSConfig, sp NLSSplit) {
	t.Helper()
	all, _ := structure.Train(trees, cfg.model())
	cx := all.Contexts()
	byText := map[string]structure.Structure{}
	perTree := make([]map[string]bool, len(trees))
	for i, tr := range trees {
		perTree[i] = map[string]bool{}
		for _, s := range all.Structures(all.Graph(tr)) {
			f := s.Format(all.Symbols())
			byText[f] = s
			perTree[i][f] = true
		}
	}
	seed := byText[sp.Seed]
	held := func(th float64) []string {
		out := []string{sp.Seed}
		for f, s := range byText {
			if f != sp.Seed && cx.StructureSim(seed, s) > th {
				out = append(out, f)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, h := range sp.HeldOut {
		if h != sp.Seed && !(cx.StructureSim(seed, byText[h]) > sp.Threshold) {
			t.Fatalf("split %s: held-out %s has similarity %v <= threshold %v", sp.Seed, h, cx.StructureSim(seed, byText[h]), sp.Threshold)
		}
	}
	if cfg.Half {
		return
	}
	if got := held(sp.Threshold); !slices.Equal(got, sp.HeldOut) {
		t.Fatalf("split %s at threshold %v: held out %v, want %v", sp.Seed, sp.Threshold, sp.HeldOut, got)
	}
	valid := func(h []string) bool {
		isTest := make([]bool, len(trees))
		nTest := 0
		for i := range trees {
			for _, s := range h {
				if perTree[i][s] {
					isTest[i] = true
					nTest++
					break
				}
			}
		}
		if nTest == 0 || nTest == len(trees) {
			return false
		}
		trainSyms := map[string]bool{}
		tmpl, testTmpl := map[string]bool{}, map[string]bool{}
		for i, tr := range trees {
			tmpl[tr.String()] = true
			if isTest[i] {
				testTmpl[tr.String()] = true
			} else {
				tr.Walk(func(n *data.Tree) { trainSyms[n.Label] = true })
			}
		}
		ok := float64(len(testTmpl))/float64(len(tmpl)) <= cfg.MaxTestTemplates
		for i, tr := range trees {
			if isTest[i] {
				tr.Walk(func(n *data.Tree) { ok = ok && trainSyms[n.Label] })
			}
		}
		return ok
	}
	lower := []float64{0}
	for _, s := range byText {
		if v := cx.StructureSim(seed, s); v > 0 && v < 1 {
			lower = append(lower, v)
		}
	}
	for _, th := range lower {
		if th < sp.Threshold && valid(held(th)) {
			t.Fatalf("split %s: threshold %v, but the lower %v already gives a valid split", sp.Seed, sp.Threshold, th)
		}
	}
}

// TestNLSHarderThanRandom: the adversarial splits' test examples are less
// easy, on average, than those of random splits of the same size.
func TestNLSHarderThanRandom(t *testing.T) {
	trees := nlsPool(400, 2)
	splits, err := NLS(trees, DefaultNLSConfig(), data.NewRand(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := splits[0]
	r := data.NewRand(9)
	perm := r.Perm(len(trees))
	isTest := map[int]bool{}
	for _, i := range perm[:len(sp.Test)] {
		isTest[i] = true
	}
	var tr, te []*data.Tree
	for i, x := range trees {
		if isTest[i] {
			te = append(te, x)
		} else {
			tr = append(tr, x)
		}
	}
	m, _ := structure.Train(tr, structure.DefaultConfig())
	sum := 0.0
	for _, x := range te {
		sum += m.ScoreTree(x)
	}
	if rnd := sum / float64(len(te)); sp.Easiness >= rnd {
		t.Fatalf("hardest nls split easiness %v not below random split's %v", sp.Easiness, rnd)
	}
}

func TestNLSConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  NLSConfig
		ok   bool
	}{
		{"default", DefaultNLSConfig(), true},
		{"n=5", NLSConfig{N: 5, MaxTestTemplates: 0.3, Tau: 1}, false},
		{"K=0", NLSConfig{N: 2, MaxTestTemplates: 0, Tau: 1}, false},
		{"tau>1", NLSConfig{N: 2, MaxTestTemplates: 0.3, Tau: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v", err)
			}
		})
	}
}
