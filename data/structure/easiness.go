package structure

// The easiness decision rule of Bogin et al. §4.3 and its alternatives and
// ablations (§4.4, §5.1): ê(p) = min over the unobserved n-LSs s of p of
// max over observed structures s' of sim(s, s'); 1 when p has none.

import (
	"cmp"
	"fmt"
	"slices"

	"compbench/data"
)

// Variant is a decision rule of §4.4/§5.1.
type Variant string

// The decision rules.
const (
	// Full is the n-LS rule with similarity (§4.3).
	Full Variant = "full"
	// NoSib drops sibling edges from structures and contexts (2-LS-NOSIB).
	NoSib Variant = "nosib"
	// NoPC drops parent-child edges from structures and contexts (2-LS-NOPC).
	NoPC Variant = "nopc"
	// NoSim scores 0 any program with an unobserved structure (2-LS-NOSIM).
	NoSim Variant = "nosim"
	// Bigram replaces structures by consecutive n-grams of the program's
	// symbol sequence, with left/right contexts (§4.4).
	Bigram Variant = "bigram"
	// Length scores max(1 - len/maxlen_train, 0) (§4.4).
	Length Variant = "length"
	// Random scores a uniform random number from the seed (a floor for AUC).
	Random Variant = "random"
)

// Variants lists every decision rule.
var Variants = []Variant{Full, NoSib, NoPC, NoSim, Bigram, Length, Random}

// Config chooses the decision rule.
type Config struct {
	// N is the largest structure size n of n-LS (2, 3 or 4); for Bigram the
	// largest n-gram order. Structures of every size from 2 to N count.
	N int
	// Variant is the decision rule.
	Variant Variant
	// Seed drives the Random variant.
	Seed uint64
}

// DefaultConfig is 2-LS with similarity, the paper's main rule.
func DefaultConfig() Config { return Config{N: 2, Variant: Full, Seed: 1} }

// Validate checks the fields.
func (c Config) Validate() error {
	if c.N < 2 || c.N > 4 {
		return fmt.Errorf("n must be 2, 3 or 4, not %d", c.N)
	}
	if !slices.Contains(Variants, c.Variant) {
		return fmt.Errorf("unknown variant %q (want one of %v)", c.Variant, Variants)
	}
	return nil
}

// kinds and contexts say which edges and context types a variant uses.
func (c Config) kinds() Kinds {
	switch c.Variant {
	case NoSib:
		return ParentChild
	case NoPC:
		return Siblings
	}
	return Both
}

func (c Config) contexts() []Context {
	switch c.Variant {
	case NoSib:
		return []Context{Parents, Children}
	case NoPC, Bigram:
		return []Context{Left, Right}
	}
	return []Context{Parents, Children, Left, Right}
}

// Model is what the rule learns from the training programs: the observed
// structures, indexed by "structure with one hole" so the most similar
// observed structure is a lookup, and the symbols' contexts.
type Model struct {
	cfg      Config
	syms     *Symbols
	cx       *Contexts
	observed map[Structure]struct{}
	// holes maps a structure with one slot set to hole to the symbols seen
	// in that slot in training (sorted).
	holes  map[Structure][]int32
	maxLen int
	buf    []Structure
	best   map[Structure]float64
	rng    interface{ Float64() float64 }
}

// Train builds the model from training program trees (nil trees count as
// empty programs).
func Train(trees []*data.Tree, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, syms: NewSymbols(), observed: map[Structure]struct{}{},
		holes: map[Structure][]int32{}, best: map[Structure]float64{},
		rng: data.SubRand(cfg.Seed, "easiness-random")}
	var cb ContextBuilder
	for _, t := range trees {
		g := NewGraph(t, m.syms)
		m.maxLen = max(m.maxLen, len(g.Label)-1)
		if cfg.Variant == Bigram {
			cb.AddSequence(g.Sequence())
		} else {
			cb.AddGraph(g)
		}
		for _, s := range m.structures(g) {
			m.observed[s] = struct{}{}
		}
	}
	m.cx = cb.Build(m.syms.Len(), cfg.contexts())
	for s := range m.observed {
		for i := range s.Len() {
			k := s
			k.Sym[i] = hole
			m.holes[k] = append(m.holes[k], s.Sym[i])
		}
	}
	for _, l := range m.holes {
		slices.Sort(l)
	}
	return m, nil
}

// Symbols is the model's symbol table (training symbols first).
func (m *Model) Symbols() *Symbols { return m.syms }

// Contexts are the training symbols' contexts.
func (m *Model) Contexts() *Contexts { return m.cx }

// Observed reports whether s occurs in training.
func (m *Model) Observed(s Structure) bool {
	_, ok := m.observed[s]
	return ok
}

// Graph flattens t with the model's symbol table (adding unseen symbols).
func (m *Model) Graph(t *data.Tree) *Graph { return NewGraph(t, m.syms) }

// Structures returns the distinct structures of g the rule considers, sorted.
// The slice is reused by the next call.
func (m *Model) Structures(g *Graph) []Structure { return m.structures(g) }

func (m *Model) structures(g *Graph) []Structure {
	m.buf = m.buf[:0]
	emit := func(s Structure) { m.buf = append(m.buf, s) }
	switch m.cfg.Variant {
	case Length, Random:
		return nil
	case Bigram:
		for n := 2; n <= m.cfg.N; n++ {
			ExtractNGrams(g.Sequence(), n, emit)
		}
	default:
		g.Extract(m.cfg.N, m.cfg.kinds(), emit)
	}
	slices.SortFunc(m.buf, compareStructures)
	m.buf = slices.Compact(m.buf)
	return m.buf
}

func compareStructures(a, b Structure) int {
	if c := cmp.Compare(a.Shape, b.Shape); c != 0 {
		return c
	}
	for i := range a.Sym {
		if c := cmp.Compare(a.Sym[i], b.Sym[i]); c != 0 {
			return c
		}
	}
	return 0
}

// BestSim is max over observed s' of sim(s, s'): 1 if s is observed, else
// the best symbol similarity reachable by changing one symbol of s into
// one that gives an observed structure (0 if none). NoSim gives 0 for
// every unobserved structure.
func (m *Model) BestSim(s Structure) float64 {
	if m.Observed(s) {
		return 1
	}
	if m.cfg.Variant == NoSim {
		return 0
	}
	if v, ok := m.best[s]; ok {
		return v
	}
	best := 0.0
	for i := range s.Len() {
		k := s
		k.Sym[i] = hole
		for _, c := range m.holes[k] {
			best = max(best, m.cx.Sim(s.Sym[i], c))
		}
	}
	m.best[s] = best
	return best
}

// Unobserved is one structure of a test program not seen in training.
type Unobserved struct {
	// Structure is the structure, rendered "shape(sym, ...)".
	Structure string `json:"structure"`
	// Easiness is its max similarity to an observed structure.
	Easiness float64 `json:"easiness"`
}

// Result is the easiness of one test program.
type Result struct {
	// Easiness is ê in [0, 1].
	Easiness float64
	// Unobserved lists the unobserved structures, hardest first.
	Unobserved []Unobserved
}

// Score computes ê for each test tree, in order. It is not safe for
// concurrent use (it interns new symbols and caches per structure).
func (m *Model) Score(trees []*data.Tree) []Result {
	out := make([]Result, len(trees))
	for i, t := range trees {
		out[i] = m.score(t)
	}
	return out
}

func (m *Model) score(t *data.Tree) Result {
	switch m.cfg.Variant {
	case Random:
		return Result{Easiness: m.rng.Float64()}
	case Length:
		n := t.Size()
		if t != nil && t.Label == Root {
			n--
		}
		if m.maxLen == 0 {
			return Result{Easiness: 0}
		}
		return Result{Easiness: max(1-float64(n)/float64(m.maxLen), 0)}
	}
	g := m.Graph(t)
	r := Result{Easiness: 1}
	for _, s := range m.structures(g) {
		if m.Observed(s) {
			continue
		}
		b := m.BestSim(s)
		r.Easiness = min(r.Easiness, b)
		r.Unobserved = append(r.Unobserved, Unobserved{Structure: s.Format(m.syms), Easiness: b})
	}
	slices.SortStableFunc(r.Unobserved, func(a, b Unobserved) int {
		if c := cmp.Compare(a.Easiness, b.Easiness); c != 0 {
			return c
		}
		return cmp.Compare(a.Structure, b.Structure)
	})
	return r
}

// ScoreTree is the easiness of a single program without the list of
// unobserved structures (used by split builders in inner loops).
func (m *Model) ScoreTree(t *data.Tree) float64 {
	switch m.cfg.Variant {
	case Random, Length:
		return m.score(t).Easiness
	}
	e := 1.0
	for _, s := range m.structures(m.Graph(t)) {
		if !m.Observed(s) {
			e = min(e, m.BestSim(s))
		}
	}
	return e
}
