package split

// The adversarial n-LS split of Bogin et al. §6.1 and App. B.4: for each
// local structure s, hold out every program containing a structure similar
// to s, with the lowest similarity threshold that keeps the split valid and
// small enough.

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// NLSConfig configures the n-LS adversarial split.
type NLSConfig struct {
	// N is the local-structure size (2, 3 or 4); the paper uses 2.
	N int `json:"n"`
	// NoSib ignores sibling edges in structures and contexts (2-LS-NOSIB).
	NoSib bool `json:"nosib"`
	// Half holds out s and a random half of the structures similar to it
	// instead of all of them (2-LS-NOSIB-HALF).
	Half bool `json:"half"`
	// MaxTestTemplates is K: the largest fraction of distinct programs
	// (templates) allowed in test; the paper uses 0.3.
	MaxTestTemplates float64 `json:"max_test_templates"`
	// Tau discards splits whose mean predicted easiness exceeds it (1 keeps all).
	Tau float64 `json:"tau"`
	// MaxSplits keeps only the hardest splits when positive (the paper keeps 15).
	MaxSplits int `json:"max_splits"`
}

// DefaultNLSConfig is the paper's 2-LS setting.
func DefaultNLSConfig() NLSConfig {
	return NLSConfig{N: 2, MaxTestTemplates: 0.3, Tau: 1}
}

// Validate checks the fields.
func (c NLSConfig) Validate() error {
	if c.N < 2 || c.N > 4 {
		return fmt.Errorf("nls: n must be 2, 3 or 4, not %d", c.N)
	}
	if c.MaxTestTemplates <= 0 || c.MaxTestTemplates >= 1 {
		return fmt.Errorf("nls: max test template fraction must be in (0, 1), not %v", c.MaxTestTemplates)
	}
	if c.Tau < 0 || c.Tau > 1 {
		return fmt.Errorf("nls: tau must be in [0, 1], not %v", c.Tau)
	}
	if c.MaxSplits < 0 {
		return fmt.Errorf("nls: max splits must be >= 0")
	}
	return nil
}

func (c NLSConfig) model() structure.Config {
	v := structure.Full
	if c.NoSib {
		v = structure.NoSib
	}
	return structure.Config{N: c.N, Variant: v}
}

// NLSSplit is one adversarial split.
type NLSSplit struct {
	// Seed is the structure s the split was built from; Merged lists the
	// other seeds that gave the same test set.
	Seed   string   `json:"seed"`
	Merged []string `json:"merged,omitempty"`
	// Threshold is t: the held-out structures have similarity > t to s.
	Threshold float64 `json:"threshold"`
	// HeldOut lists the held-out structures S_u(t).
	HeldOut []string `json:"held_out"`
	// TemplateFrac is the fraction of distinct programs in test.
	TemplateFrac float64 `json:"test_template_fraction"`
	// Easiness is the mean predicted easiness of the test examples.
	Easiness float64 `json:"easiness"`
	// Train and Test are pool indices, ascending.
	Train, Test []int `json:"-"`
}

// Assignment returns the split as train/test indices (no dev part).
func (s *NLSSplit) Assignment() Assignment {
	return Assignment{Train: s.Train, Dev: []int{}, Test: s.Test}
}

// NLS builds every adversarial split of the pool, hardest first. trees[i]
// is pool example i's program. Symbol similarities come from all programs
// of the pool (the split does not exist yet when structures are chosen).
func NLS(trees []*data.Tree, cfg NLSConfig, rng *rand.Rand, rep progress.Reporter) ([]NLSSplit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(trees) < 2 {
		return nil, errors.New("nls: need at least two examples")
	}
	all, err := structure.Train(trees, cfg.model())
	if err != nil {
		return nil, err
	}
	syms, cx := all.Symbols(), all.Contexts()
	// Structures, their posting lists, and each example's symbols.
	sid := map[structure.Structure]int{}
	var structs []structure.Structure
	var post [][]int32
	exSyms := make([][]int32, len(trees))
	symCount := make([]int, 0)
	tmplOf := make([]int, len(trees))
	tmplID := map[string]int{}
	for i, t := range trees {
		g := all.Graph(t)
		for _, s := range all.Structures(g) {
			k, ok := sid[s]
			if !ok {
				k = len(structs)
				sid[s] = k
				structs = append(structs, s)
				post = append(post, nil)
			}
			post[k] = append(post[k], int32(i))
		}
		ls := slices.Clone(g.Label[1:])
		slices.Sort(ls)
		exSyms[i] = slices.Compact(ls)
		for _, m := range exSyms[i] {
			for int(m) >= len(symCount) {
				symCount = append(symCount, 0)
			}
			symCount[m]++
		}
		key := t.String()
		id, ok := tmplID[key]
		if !ok {
			id = len(tmplID)
			tmplID[key] = id
		}
		tmplOf[i] = id
	}
	// Visit structures in a fixed order, independent of map iteration.
	order := make([]int, len(structs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(structs[a].Format(syms), structs[b].Format(syms)) })
	// Hole index: structures sharing all but one symbol.
	holes := map[structure.Structure][]int{}
	for k, s := range structs {
		for i := range s.Len() {
			h := s
			h.Sym[i] = -2
			holes[h] = append(holes[h], k)
		}
	}
	nTmpl := len(tmplID)
	inTest := make([]bool, len(trees))
	testSym := make([]int, len(symCount))
	tmplIn := make([]bool, nTmpl)
	bar := progress.Or(rep).Bar("nls", int64(len(order)))
	var out []NLSSplit
	byTest := map[string]int{}
	for _, k := range order {
		bar.Add(1)
		s := structs[k]
		type nb struct {
			k   int
			sim float64
		}
		var nbs []nb
		for i := range s.Len() {
			h := s
			h.Sym[i] = -2
			for _, o := range holes[h] {
				if o != k {
					nbs = append(nbs, nb{o, cx.Sim(s.Sym[i], structs[o].Sym[i])})
				}
			}
		}
		slices.SortFunc(nbs, func(a, b nb) int { return cmp.Compare(a.k, b.k) })
		if cfg.Half {
			keep := nbs[:0]
			for _, x := range nbs {
				if rng.IntN(2) == 0 {
					keep = append(keep, x)
				}
			}
			nbs = keep
		}
		ts := []float64{0}
		for _, x := range nbs {
			if x.sim > 0 {
				ts = append(ts, x.sim)
			}
		}
		slices.Sort(ts)
		ts = slices.Compact(ts)
		for _, t := range ts {
			held := []int{k}
			for _, x := range nbs {
				if x.sim > t {
					held = append(held, x.k)
				}
			}
			test, frac, ok := nlsTest(held, post, exSyms, symCount, tmplOf, nTmpl, cfg.MaxTestTemplates, inTest, testSym, tmplIn)
			if !ok {
				continue
			}
			key := fmt.Sprint(test)
			if j, dup := byTest[key]; dup {
				out[j].Merged = append(out[j].Merged, s.Format(syms))
				break
			}
			sp := NLSSplit{Seed: s.Format(syms), Threshold: t, TemplateFrac: frac, Test: test}
			for _, h := range held {
				sp.HeldOut = append(sp.HeldOut, structs[h].Format(syms))
			}
			slices.Sort(sp.HeldOut)
			byTest[key] = len(out)
			out = append(out, sp)
			break
		}
	}
	bar.Finish()
	// Easiness of each split against its own training set (§5.2: the mean
	// of ê over its test instances), then the τ filter and ordering.
	kept := out[:0]
	for _, sp := range out {
		isTest := make([]bool, len(trees))
		for _, i := range sp.Test {
			isTest[i] = true
		}
		var trTrees, teTrees []*data.Tree
		for i, t := range trees {
			if isTest[i] {
				teTrees = append(teTrees, t)
			} else {
				sp.Train = append(sp.Train, i)
				trTrees = append(trTrees, t)
			}
		}
		m, err := structure.Train(trTrees, cfg.model())
		if err != nil {
			return nil, err
		}
		sum := 0.0
		for _, t := range teTrees {
			sum += m.ScoreTree(t)
		}
		sp.Easiness = sum / float64(len(teTrees))
		if sp.Easiness <= cfg.Tau {
			kept = append(kept, sp)
		}
	}
	slices.SortStableFunc(kept, func(a, b NLSSplit) int {
		if c := cmp.Compare(a.Easiness, b.Easiness); c != 0 {
			return c
		}
		return cmp.Compare(a.Seed, b.Seed)
	})
	if cfg.MaxSplits > 0 && len(kept) > cfg.MaxSplits {
		kept = kept[:cfg.MaxSplits]
	}
	if len(kept) == 0 {
		return nil, errors.New("nls: no valid split: every candidate breaks the template limit, leaves a test symbol out of train, or is easier than tau")
	}
	return kept, nil
}

// nlsTest gathers the examples holding any structure of held and checks
// the split: test non-empty, train non-empty, every test symbol also in
// train, and at most maxFrac of the distinct programs in test. The scratch
// slices are returned cleared.
func nlsTest(held []int, post [][]int32, exSyms [][]int32, symCount, tmplOf []int, nTmpl int,
	maxFrac float64, inTest []bool, testSym []int, tmplIn []bool) ([]int, float64, bool) {
	var test []int
	for _, h := range held {
		for _, i := range post[h] {
			if !inTest[i] {
				inTest[i] = true
				test = append(test, int(i))
			}
		}
	}
	defer func() {
		for _, i := range test {
			inTest[i] = false
			for _, m := range exSyms[i] {
				testSym[m] = 0
			}
			tmplIn[tmplOf[i]] = false
		}
	}()
	if len(test) == 0 || len(test) == len(inTest) {
		return nil, 0, false
	}
	nt := 0
	for _, i := range test {
		if !tmplIn[tmplOf[i]] {
			tmplIn[tmplOf[i]] = true
			nt++
		}
		for _, m := range exSyms[i] {
			testSym[m]++
		}
	}
	frac := float64(nt) / float64(nTmpl)
	if frac > maxFrac {
		return nil, frac, false
	}
	for _, i := range test {
		for _, m := range exSyms[i] {
			if testSym[m] == symCount[m] {
				return nil, frac, false // every occurrence of m is in test
			}
		}
	}
	slices.Sort(test)
	return test, frac, true
}
