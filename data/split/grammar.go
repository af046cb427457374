package split

// Grammar splits: Bogin et al., "Unobserved Local Structures Make
// Compositional Generalization Hard", §2.1 (definition) and App. B.2 (which
// sets of held-out rule pairs U are tried).

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/scfg"
)

// GrammarConfig controls grammar splits.
type GrammarConfig struct {
	// DevFrac is the fraction of the non-test examples moved to dev, at
	// random; 0 leaves dev empty, as in Bogin et al. (train and test only).
	DevFrac float64
	// Seed drives the dev draw.
	Seed uint64
}

// DefaultGrammarConfig returns no dev set, seed 0.
func DefaultGrammarConfig() GrammarConfig { return GrammarConfig{} }

// Validate checks the fraction.
func (c GrammarConfig) Validate() error {
	if !(c.DevFrac >= 0 && c.DevFrac < 1) {
		return fmt.Errorf("dev fraction must be in [0, 1), got %v", c.DevFrac)
	}
	return nil
}

// RulePair is one held-out pair (r1, r2): r1 has LHS l1, r2 has LHS l2.
// Both hold rule labels, as in derivation trees.
type RulePair [2]string

// Kinds of U, named after the line of the pseudo code of App. B.2 that
// yields them.
const (
	// KindComb is U_comb, the Cartesian product G_l1 x G_l2 (line 1).
	KindComb = "comb"
	// KindPair is one pair of U_comb (line 3).
	KindPair = "pair"
	// KindRule is every pair of U_comb that contains one rule r (line 6).
	KindRule = "rule"
)

// HeldOut is one instance of U.
type HeldOut struct {
	// L1 and L2 are the meaningful non-terminals the pairs come from.
	L1, L2 string
	// Kind is KindComb, KindPair or KindRule.
	Kind string
	// Rule is the rule r of a KindRule set; empty otherwise.
	Rule string
	// Pairs are the held-out rule pairs, r1 from G_l1 and r2 from G_l2.
	Pairs []RulePair
	// pairIDs are the same pairs as rule ids.
	pairIDs [][2]int
}

// MeaningfulNonTerminals returns the non-terminals l with (1) at least two
// rules whose LHS is l, or (2) at least two rules with l in their RHS
// (App. B.2), in order of their first rule in the grammar file.
func MeaningfulNonTerminals(g *scfg.Grammar) []string {
	inRHS := map[string]int{}
	for i := range g.Rules {
		seen := map[string]bool{}
		for _, c := range g.Rules[i].Children() {
			if !seen[c] {
				seen[c] = true
				inRHS[c]++
			}
		}
	}
	var out []string
	done := map[string]bool{}
	for i := range g.Rules {
		l := g.Rules[i].LHS
		if done[l] {
			continue
		}
		done[l] = true
		if len(g.RulesOf(l)) >= 2 || inRHS[l] >= 2 {
			out = append(out, l)
		}
	}
	return out
}

// HeldOutSets enumerates the instances of U of App. B.2: for every unordered
// pair (l1, l2) of meaningful non-terminals (l1 before l2 in grammar order),
// U_comb, then each pair of U_comb alone, then for each rule r of G_l1 and
// then of G_l2 the pairs of U_comb containing r. A set equal to one yielded
// before (e.g. the per-rule set of the only rule of G_l2 equals U_comb) is
// skipped: it would give the same split twice.
func HeldOutSets(g *scfg.Grammar) []HeldOut {
	L := MeaningfulNonTerminals(g)
	var out []HeldOut
	for i := 0; i < len(L); i++ {
		for j := i + 1; j < len(L); j++ {
			out = append(out, heldOutFor(g, L[i], L[j])...)
		}
	}
	return out
}

func heldOutFor(g *scfg.Grammar, l1, l2 string) []HeldOut {
	g1, g2 := g.RulesOf(l1), g.RulesOf(l2)
	var comb [][2]int
	for _, a := range g1 {
		for _, b := range g2 {
			comb = append(comb, [2]int{a, b})
		}
	}
	var out []HeldOut
	seen := map[string]bool{}
	add := func(kind, rule string, ids [][2]int) {
		key := fmt.Sprint(ids)
		if seen[key] {
			return
		}
		seen[key] = true
		h := HeldOut{L1: l1, L2: l2, Kind: kind, Rule: rule, pairIDs: ids}
		for _, p := range ids {
			h.Pairs = append(h.Pairs, RulePair{g.Rules[p[0]].Label, g.Rules[p[1]].Label})
		}
		out = append(out, h)
	}
	add(KindComb, "", comb)
	for _, p := range comb {
		add(KindPair, "", [][2]int{p})
	}
	for _, r := range append(append([]int(nil), g1...), g2...) {
		var sub [][2]int
		for _, p := range comb {
			if p[0] == r || p[1] == r {
				sub = append(sub, p)
			}
		}
		add(KindRule, g.Rules[r].Label, sub)
	}
	return out
}

// GrammarCandidate is one instance of U evaluated on a pool.
type GrammarCandidate struct {
	// Index numbers the candidate in HeldOutSets order (the --index value).
	Index int
	HeldOut
	// NTrain, NDev and NTest are the part sizes.
	NTrain, NDev, NTest int
	// Train, Dev and Test are pool indices, ascending; only Candidate fills
	// them (Candidates keeps sizes alone, to stay small on large pools).
	Train, Dev, Test []int
	// Valid is false when test is empty, train is empty, or a test symbol
	// never occurs in train.
	Valid bool
	// Reason says why the candidate is invalid.
	Reason string
}

// GrammarSplitter evaluates held-out sets on one pool.
type GrammarSplitter struct {
	g    *scfg.Grammar
	pool []data.Record
	cfg  GrammarConfig
	// rules[i] is the set of rule ids in example i's derivation (bitset).
	rules [][]uint64
	// syms[i] are example i's program symbols as ids into symNames.
	syms     [][]int32
	symNames []string
	// symTotal[t] counts symbol t over the whole pool.
	symTotal []int
	// postings[r] lists, ascending, the examples whose derivation uses rule r.
	postings [][]int32
	// devOrder is a seeded random order of the pool for the dev draw.
	devOrder []int32
	// stamp and epoch mark examples per evaluation without clearing (so a
	// splitter is not safe for concurrent use).
	stamp []uint32
	epoch uint32
	// symOut counts a symbol's held-out occurrences in the evaluation
	// whose number is in symSeen.
	symOut   []int
	symSeen  []uint32
	symEpoch uint32
	// sets are the held-out sets, in candidate order.
	sets []HeldOut
}

// NewGrammarSplitter reads every example's derivation (its tree, labelled
// with g's rule labels) and program symbols (its output tokens).
func NewGrammarSplitter(g *scfg.Grammar, pool []data.Record, cfg GrammarConfig) (*GrammarSplitter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("grammar split: empty pool")
	}
	s := &GrammarSplitter{g: g, pool: pool, cfg: cfg}
	words := (len(g.Rules) + 63) / 64
	symID := map[string]int32{}
	for i := range pool {
		r := &pool[i]
		if r.Tree == nil {
			return nil, fmt.Errorf("grammar split: record %q has no derivation tree", r.ID)
		}
		set := make([]uint64, words)
		var bad string
		r.Tree.Walk(func(t *data.Tree) {
			rule, ok := g.RuleByLabel(t.Label)
			if !ok {
				if bad == "" {
					bad = t.Label
				}
				return
			}
			set[rule.ID/64] |= 1 << (rule.ID % 64)
		})
		if bad != "" {
			return nil, fmt.Errorf("grammar split: record %q: tree label %q is not a rule of the grammar", r.ID, bad)
		}
		s.rules = append(s.rules, set)
		var ids []int32
		for _, tok := range strings.Fields(r.Output) {
			id, ok := symID[tok]
			if !ok {
				id = int32(len(s.symNames))
				symID[tok] = id
				s.symNames = append(s.symNames, tok)
			}
			ids = append(ids, id)
			if int(id) == len(s.symTotal) {
				s.symTotal = append(s.symTotal, 0)
			}
			s.symTotal[id]++
		}
		s.syms = append(s.syms, ids)
	}
	for _, i := range data.SubRand(cfg.Seed, "grammar-dev").Perm(len(pool)) {
		s.devOrder = append(s.devOrder, int32(i))
	}
	s.postings = make([][]int32, len(g.Rules))
	for i := range pool {
		for r := range g.Rules {
			if s.has(i, r) {
				s.postings[r] = append(s.postings[r], int32(i))
			}
		}
	}
	s.stamp = make([]uint32, len(pool))
	s.symOut = make([]int, len(s.symNames))
	s.symSeen = make([]uint32, len(s.symNames))
	s.sets = HeldOutSets(g)
	return s, nil
}

func (s *GrammarSplitter) has(i, rule int) bool { return s.rules[i][rule/64]&(1<<(rule%64)) != 0 }

// Len is the number of candidates.
func (s *GrammarSplitter) Len() int { return len(s.sets) }

// Candidates evaluates every held-out set of HeldOutSets, in order, keeping
// only sizes and validity. step, if not nil, is called once per candidate.
func (s *GrammarSplitter) Candidates(step func()) []GrammarCandidate {
	out := make([]GrammarCandidate, len(s.sets))
	for k, h := range s.sets {
		out[k] = s.evaluate(k, h, false)
		if step != nil {
			step()
		}
	}
	return out
}

// Candidate evaluates candidate k with its index lists.
func (s *GrammarSplitter) Candidate(k int) (GrammarCandidate, error) {
	if k < 0 || k >= len(s.sets) {
		return GrammarCandidate{}, fmt.Errorf("grammar split index %d out of range [0, %d)", k, len(s.sets))
	}
	return s.evaluate(k, s.sets[k], true), nil
}

// evaluate puts in test every example whose derivation contains both rules
// of some pair of U (§2.1), draws dev from the rest, and checks that every
// test symbol occurs in train (App. B.2). Test comes from intersecting the
// two rules' posting lists, so the cost follows the held-out part, not the
// pool; full lists (withLists) cost one pass over the pool.
func (s *GrammarSplitter) evaluate(k int, h HeldOut, withLists bool) GrammarCandidate {
	c := GrammarCandidate{Index: k, HeldOut: h}
	s.epoch++
	for _, p := range h.pairIDs {
		a, b := s.postings[p[0]], s.postings[p[1]]
		for x, y := 0, 0; x < len(a) && y < len(b); {
			switch {
			case a[x] < b[y]:
				x++
			case a[x] > b[y]:
				y++
			default:
				if i := a[x]; s.stamp[i] != s.epoch {
					s.stamp[i] = s.epoch
					c.Test = append(c.Test, int(i))
				}
				x++
				y++
			}
		}
	}
	sort.Ints(c.Test)
	testEpoch := s.epoch
	// Dev: the first round(DevFrac * rest) non-test examples in the seeded
	// random order.
	nDev := int(math.Round(s.cfg.DevFrac * float64(len(s.pool)-len(c.Test))))
	s.epoch++
	for _, i := range s.devOrder {
		if len(c.Dev) == nDev {
			break
		}
		if s.stamp[i] != testEpoch {
			s.stamp[i] = s.epoch
			c.Dev = append(c.Dev, int(i))
		}
	}
	sort.Ints(c.Dev)
	c.NTest, c.NDev = len(c.Test), len(c.Dev)
	c.NTrain = len(s.pool) - c.NTest - c.NDev
	c.Valid, c.Reason = s.check(&c)
	if withLists {
		for i := range s.pool {
			if st := s.stamp[i]; st != testEpoch && st != s.epoch {
				c.Train = append(c.Train, i)
			}
		}
	} else {
		c.Test, c.Dev = nil, nil
	}
	return c
}

// check reports whether the candidate makes a valid split.
func (s *GrammarSplitter) check(c *GrammarCandidate) (bool, string) {
	if len(c.Test) == 0 {
		return false, "no example contains a held-out pair"
	}
	if c.NTrain == 0 {
		return false, "every example is held out"
	}
	// A symbol is in train unless all its occurrences are in test or dev;
	// counting those alone keeps this proportional to the held-out part.
	s.symEpoch++
	for _, part := range [][]int{c.Test, c.Dev} {
		for _, i := range part {
			for _, t := range s.syms[i] {
				if s.symSeen[t] != s.symEpoch {
					s.symSeen[t] = s.symEpoch
					s.symOut[t] = 0
				}
				s.symOut[t]++
			}
		}
	}
	var missing []string
	for _, i := range c.Test {
		for _, t := range s.syms[i] {
			if s.symOut[t] == s.symTotal[t] {
				s.symOut[t] = -1 // report once
				missing = append(missing, s.symNames[t])
			}
		}
	}
	if len(missing) > 0 {
		return false, "test symbols missing from train: " + strings.Join(missing, " ")
	}
	return true, ""
}

// Invalid is the error for materializing an invalid candidate.
func (c *GrammarCandidate) Invalid() error {
	if c.Valid {
		return nil
	}
	return fmt.Errorf("grammar split %d is invalid: %s", c.Index, c.Reason)
}

// GrammarParams are the split.json params of a grammar split.
type GrammarParams struct {
	// Index is the candidate number.
	Index int `json:"index"`
	// L1 and L2 are the meaningful non-terminals.
	L1 string `json:"l1"`
	L2 string `json:"l2"`
	// Kind is comb, pair or rule.
	Kind string `json:"kind"`
	// Rule is the rule of a per-rule set.
	Rule string `json:"rule,omitempty"`
	// Pairs are the held-out rule pairs.
	Pairs []RulePair `json:"pairs"`
	// DevFrac and Seed are the dev draw's settings.
	DevFrac float64 `json:"dev_frac"`
	Seed    uint64  `json:"seed"`
}

// Params returns the candidate's split.json params.
func (s *GrammarSplitter) Params(c *GrammarCandidate) GrammarParams {
	return GrammarParams{Index: c.Index, L1: c.L1, L2: c.L2, Kind: c.Kind, Rule: c.Rule,
		Pairs: c.Pairs, DevFrac: s.cfg.DevFrac, Seed: s.cfg.Seed}
}
