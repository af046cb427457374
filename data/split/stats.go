package split

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// Stats compares a train and a test set (Keysers et al. §2.1 divergences
// plus simple coverage and length measures).
type Stats struct {
	// TrainSize, DevSize and TestSize count examples.
	TrainSize int `json:"train_size"`
	DevSize   int `json:"dev_size"`
	TestSize  int `json:"test_size"`
	// AtomDivergence is D_A = 1 - C_0.5(F_A(train) || F_A(test)); null
	// without trees.
	AtomDivergence *float64 `json:"atom_divergence"`
	// CompoundDivergence is D_C = 1 - C_0.1(F_C(train) || F_C(test)) over
	// weighted compounds; null without trees.
	CompoundDivergence *float64 `json:"compound_divergence"`
	// CompoundDivergenceUnweighted is D_C with every weight 1.
	CompoundDivergenceUnweighted *float64 `json:"compound_divergence_unweighted"`
	// OutputPatternCoverage is the fraction of distinct test output
	// templates that also occur in train.
	OutputPatternCoverage float64 `json:"output_pattern_coverage"`
	// InputPatternCoverage is the same for inputs.
	InputPatternCoverage float64 `json:"input_pattern_coverage"`
	// OutputLengthRatio is mean train output length / mean test output
	// length, in whitespace tokens: Keysers et al.'s Table 3 "ratio of
	// average lengths" (below 1 when test is longer; their SCAN MCD splits
	// read 0.63-0.76).
	OutputLengthRatio float64 `json:"output_length_ratio"`
	// InputLengthRatio is the same for inputs.
	InputLengthRatio float64 `json:"input_length_ratio"`
	// MissingAtoms are the test atoms that never occur in train, sorted.
	MissingAtoms []string `json:"test_atoms_missing_from_train"`
	// WeightsOver names the examples the compound weights (App. L.4's
	// P(G'|G)) and the kept compounds were estimated over: "pool" (the
	// split's whole input, as split.json and stats --split use) or
	// "train+test" (a bare pair given to stats, an estimate of the split's
	// own value).
	WeightsOver string `json:"compound_weights_over,omitempty"`
	// AtomCount is how F_A counted atoms: "example" or "occurrence" (see
	// structure.CompoundConfig.Atoms).
	AtomCount string `json:"atom_count,omitempty"`
	// Anonymizer is the pattern anonymizer the coverages used.
	Anonymizer Anonymizer `json:"anonymizer,omitempty"`
	// Measure is "nqg" when compounds and atoms are NQG's (see
	// structure.MeasureNQG); empty for Keysers et al.'s. NQG's compounds
	// carry no weights, so both compound divergences are the same number
	// and WeightsOver is empty.
	Measure string `json:"compound_measure,omitempty"`
}

// TreeNone turns tree-based statistics off (data without programs).
const TreeNone structure.TreeKind = "none"

// ParseTreeKind accepts the structure package's kinds and "none".
func ParseTreeKind(s string) (structure.TreeKind, error) {
	if s == string(TreeNone) {
		return TreeNone, nil
	}
	return structure.ParseTreeKind(s)
}

// StatsOptions configure ComputeStats.
type StatsOptions struct {
	// Tree says where programs come from; TreeNone skips divergences.
	Tree structure.TreeKind
	// Compounds bounds compound size.
	Compounds structure.CompoundConfig
	// Anonymizer maps inputs and outputs to patterns for coverage.
	Anonymizer Anonymizer
	// Progress receives progress bars (nil: none).
	Progress progress.Reporter
}

// DefaultStatsOptions reads trees automatically, compounds as
// structure.DefaultCompoundConfig, and patterns by the data's kind
// (AnonAuto).
func DefaultStatsOptions() StatsOptions {
	return StatsOptions{Tree: structure.TreeAuto, Compounds: structure.DefaultCompoundConfig(), Anonymizer: AnonAuto}
}

// ComputeStats compares train with test. Compound weights are estimated
// over train and test together; a split's own statistics weigh them over
// its whole pool (see SplitStats and ComputeStatsOver), so the two can
// differ, and the result is labelled WeightsOver "train+test".
func ComputeStats(train, test []data.Record, opts StatsOptions) (Stats, error) {
	pool := make([]data.Record, 0, len(train)+len(test))
	pool = append(append(pool, train...), test...)
	var a Assignment
	for i := range pool {
		if i < len(train) {
			a.Train = append(a.Train, i)
		} else {
			a.Test = append(a.Test, i)
		}
	}
	s, err := statsOver(pool, a, opts)
	if s.WeightsOver != "" {
		s.WeightsOver = "train+test"
	}
	return s, err
}

// ComputeStatsOver compares train with test, both drawn from pool, with
// compound weights and kept compounds estimated over the whole pool, as
// Keysers et al. estimate P(G'|G) "over the full sample set" (§2.1): a
// published split (SCAN's MCD json, which leaves half of tasks.txt out)
// measured the way its authors measured it. Records are matched to the
// pool by input and output, so ids may differ; a train or test record
// missing from the pool is an error.
func ComputeStatsOver(train, test, pool []data.Record, opts StatsOptions) (Stats, error) {
	at := make(map[[2]string]int, len(pool))
	for i := range pool {
		at[[2]string{pool[i].Input, pool[i].Output}] = i
	}
	var a Assignment
	for _, part := range []struct {
		name string
		recs []data.Record
		dst  *[]int
	}{{"train", train, &a.Train}, {"test", test, &a.Test}} {
		for i := range part.recs {
			j, ok := at[[2]string{part.recs[i].Input, part.recs[i].Output}]
			if !ok {
				return Stats{}, fmt.Errorf("%s record %d (id %q) is not in the pool (matched by input and output)", part.name, i+1, part.recs[i].ID)
			}
			*part.dst = append(*part.dst, j)
		}
	}
	return statsOver(pool, a, opts)
}

// statsOver builds the compound index over pool and computes a's
// statistics.
func statsOver(pool []data.Record, a Assignment, opts StatsOptions) (Stats, error) {
	var ix *structure.Index
	if opts.Tree != TreeNone {
		trees, err := Trees(pool, opts.Tree)
		if err != nil {
			return Stats{}, err
		}
		if ix, err = structure.Build(trees, opts.Compounds, opts.Progress); err != nil {
			return Stats{}, err
		}
	}
	return statsOf(pool, ix, a, opts.Anonymizer), nil
}

// SplitFile is the part of split.json that SplitStats reads: the ids, the
// statistics recorded, and the parameters that fix the compound index.
type SplitFile struct {
	Method string `json:"method"`
	Params struct {
		// Pool is the input file the split was made from, as given.
		Pool       string     `json:"pool"`
		Tree       string     `json:"tree"`
		MaxSize    int        `json:"compound_max_size"`
		Keep       int        `json:"compound_keep"`
		Supers     string     `json:"compound_supergraphs"`
		AtomCount  string     `json:"atom_count"`
		Measure    string     `json:"compound_measure"`
		Anonymizer Anonymizer `json:"anonymizer"`
		SkippedBad int        `json:"skipped_bad"`
	} `json:"params"`
	Train []string `json:"train"`
	Dev   []string `json:"dev"`
	Test  []string `json:"test"`
	Stats Stats    `json:"stats"`
}

// ReadSplitFile reads DIR/split.json.
func ReadSplitFile(dir string) (*SplitFile, error) {
	b, err := data.ReadFileLimit(filepath.Join(dir, "split.json"), data.SplitFile)
	if err != nil {
		return nil, err
	}
	var f SplitFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "split.json"), err)
	}
	return &f, nil
}

// SplitStats recomputes a split's statistics as the split did: the compound
// index is built over the whole pool (records whose program does not parse
// dropped when the split skipped them) with the compound size and selection
// recorded in split.json, so the result equals split.json's stats (one
// weighting, over the pool; Keysers et al. §2.1 estimate P(G'|G) "over the
// full sample set").
func SplitStats(f *SplitFile, pool []data.Record, rep progress.Reporter) (Stats, error) {
	kind, err := ParseTreeKind(f.Params.Tree)
	if err != nil {
		return Stats{}, fmt.Errorf("split.json params.tree: %w", err)
	}
	anon := f.Params.Anonymizer
	if anon == "" {
		anon = AnonGeneric
	}
	var ix *structure.Index
	if kind != TreeNone {
		var trees []*data.Tree
		if f.Params.SkippedBad > 0 {
			var bad []string
			pool, trees, bad = SkipBad(pool, kind)
			if len(bad) != f.Params.SkippedBad {
				return Stats{}, fmt.Errorf("pool has %d records whose program does not parse; the split skipped %d", len(bad), f.Params.SkippedBad)
			}
		} else if trees, err = Trees(pool, kind); err != nil {
			return Stats{}, err
		}
		// A split.json written before atom counts were recorded counted
		// every occurrence.
		atoms := f.Params.AtomCount
		if atoms == "" {
			atoms = structure.AtomsPerOccurrence
		}
		cfg := structure.CompoundConfig{MaxSize: f.Params.MaxSize, Keep: f.Params.Keep, Supergraphs: f.Params.Supers, Atoms: atoms, Measure: f.Params.Measure}
		if ix, err = structure.Build(trees, cfg, rep); err != nil {
			return Stats{}, err
		}
	}
	byID := make(map[string]int, len(pool))
	for i := range pool {
		byID[pool[i].ID] = i
	}
	var a Assignment
	for _, part := range []struct {
		ids []string
		dst *[]int
	}{{f.Train, &a.Train}, {f.Dev, &a.Dev}, {f.Test, &a.Test}} {
		for _, id := range part.ids {
			i, ok := byID[id]
			if !ok {
				return Stats{}, fmt.Errorf("split id %q is not in the pool", id)
			}
			*part.dst = append(*part.dst, i)
		}
		sort.Ints(*part.dst)
	}
	s := statsOf(pool, ix, a, anon)
	return s, nil
}

// Trees reads every record's program tree, naming the first that fails.
func Trees(pool []data.Record, kind structure.TreeKind) ([]*data.Tree, error) {
	trees := make([]*data.Tree, len(pool))
	for i := range pool {
		t, err := structure.RecordTree(&pool[i], kind)
		if err != nil {
			return nil, fmt.Errorf("record %d (id %q): %w", i+1, pool[i].ID, err)
		}
		trees[i] = t
	}
	return trees, nil
}

// SkipBad drops the records whose program does not parse, returning those
// kept with their trees and the ids dropped.
func SkipBad(pool []data.Record, kind structure.TreeKind) ([]data.Record, []*data.Tree, []string) {
	var kept []data.Record
	var trees []*data.Tree
	var bad []string
	for i := range pool {
		t, err := structure.RecordTree(&pool[i], kind)
		if err != nil {
			bad = append(bad, pool[i].ID)
			continue
		}
		kept = append(kept, pool[i])
		trees = append(trees, t)
	}
	return kept, trees, bad
}

// statsOf computes Stats for an assignment of pool; ix may be nil.
func statsOf(pool []data.Record, ix *structure.Index, a Assignment, anon Anonymizer) Stats {
	anon = anon.Resolve(pool)
	s := Stats{TrainSize: len(a.Train), DevSize: len(a.Dev), TestSize: len(a.Test), MissingAtoms: []string{}, Anonymizer: anon}
	if ix != nil {
		s.WeightsOver, s.AtomCount = "pool", ix.AtomCount
		fa, fb := ix.AtomDist(a.Train), ix.AtomDist(a.Test)
		da := structure.Divergence(fa, fb, structure.AtomAlpha)
		dc := structure.Divergence(ix.CompoundDist(a.Train, true), ix.CompoundDist(a.Test, true), structure.CompoundAlpha)
		du := structure.Divergence(ix.CompoundDist(a.Train, false), ix.CompoundDist(a.Test, false), structure.CompoundAlpha)
		if ix.Measure == structure.MeasureNQG {
			// NQG's compounds are unweighted; their per-occurrence
			// counts are the distribution, and no pool weighs them.
			du, s.WeightsOver, s.Measure = dc, "", ix.Measure
		}
		s.AtomDivergence, s.CompoundDivergence, s.CompoundDivergenceUnweighted = &da, &dc, &du
		for k := range fb {
			if fb[k] > 0 && fa[k] == 0 {
				s.MissingAtoms = append(s.MissingAtoms, ix.Atoms[k])
			}
		}
		sort.Strings(s.MissingAtoms)
	}
	in := func(r *data.Record) string { return r.Input }
	out := func(r *data.Record) string { return r.Output }
	s.OutputPatternCoverage = coverage(pool, a, anon, out)
	s.InputPatternCoverage = coverage(pool, a, anon, in)
	s.OutputLengthRatio = lengthRatio(pool, a, out)
	s.InputLengthRatio = lengthRatio(pool, a, in)
	return s
}

func coverage(pool []data.Record, a Assignment, anon Anonymizer, field func(*data.Record) string) float64 {
	seen := map[string]bool{}
	for _, i := range a.Train {
		seen[anon.Apply(field(&pool[i]))] = true
	}
	test := map[string]bool{}
	for _, i := range a.Test {
		test[anon.Apply(field(&pool[i]))] = true
	}
	if len(test) == 0 {
		return 0
	}
	n := 0
	for p := range test {
		if seen[p] {
			n++
		}
	}
	return float64(n) / float64(len(test))
}

// OutputLengths returns each record's output length in whitespace tokens,
// the length MCD's strata and the output length ratio use.
func OutputLengths(pool []data.Record) []int {
	out := make([]int, len(pool))
	for i := range pool {
		out[i] = len(strings.Fields(pool[i].Output))
	}
	return out
}

func lengthRatio(pool []data.Record, a Assignment, field func(*data.Record) string) float64 {
	mean := func(idx []int) float64 {
		if len(idx) == 0 {
			return 0
		}
		n := 0
		for _, i := range idx {
			n += len(strings.Fields(field(&pool[i])))
		}
		return float64(n) / float64(len(idx))
	}
	te := mean(a.Test)
	if te == 0 {
		return 0
	}
	return mean(a.Train) / te
}
