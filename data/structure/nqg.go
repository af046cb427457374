package structure

import (
	"strings"

	"compbench/data"
	"compbench/progress"
)

// Compound measures for CompoundConfig.Measure.
const (
	// MeasureKeysers is Keysers et al.'s §2.1: every subtree up to
	// MaxSize nodes, weighted by App. L.4, each counted once per example.
	MeasureKeysers = "keysers"
	// MeasureNQG is the measure of Shaw et al. 2021's TMCD splits as NQG's
	// code computes it for FunQL-like programs: compounds are a parent
	// with one argument slot filled, unweighted and counted per
	// occurrence; atoms are the program's symbols, once per example.
	MeasureNQG = "nqg"
)

// Measures lists the CompoundConfig.Measure values, for flag help.
var Measures = []string{MeasureKeysers, MeasureNQG}

// NQGCompoundSize is the size of NQG's compounds: a parent and one child.
const NQGCompoundSize = 2

// buildNQG indexes trees under MeasureNQG. A compound is a node's label,
// its arity, and which of its argument slots holds which child's label,
// the other slots blank: most(state, loc_1, intersection(major, city))
// gives most(state, _, _), most(_, loc_1, _) and most(_, _, intersection),
// one per slot (the text is the Keysers compound of the same two nodes, so
// the two measures name a parent-child pair alike). Only the child's own
// label counts, not its arguments, so a compound never grows with depth. A tree counts a compound once per occurrence, as NQG's
// counters do: a program that applies loc_2 twice to cities weighs
// loc_2(city) twice. There are no weights and nothing is dropped. Atoms
// are node labels, once per example by default (NQG takes the set of the
// program's tokens other than brackets and commas; on space-separated
// FunQL, whose symbols are its tokens, these are the same); cfg.Atoms
// "occurrence" counts every node instead.
func buildNQG(trees []*data.Tree, cfg CompoundConfig, rep progress.Reporter) (*Index, error) {
	ix := &Index{MaxSize: NQGCompoundSize, Measure: MeasureNQG, AtomCount: cfg.Atoms, Examples: make([]Example, len(trees))}
	if ix.AtomCount == "" {
		ix.AtomCount = AtomsPerExample
	}
	perExample := ix.AtomCount == AtomsPerExample
	atomID := map[string]int32{}
	compID := map[string]int32{}
	bar := progress.Or(rep).Bar("compounds", int64(len(trees)))
	defer bar.Finish()
	var b strings.Builder
	for i, t := range trees {
		f := flatten(t, atomID, &ix.Atoms)
		ix.Examples[i].Atoms = atomCounts(f.atom, perExample)
		counts := map[int32]float64{}
		for v, ch := range f.children {
			for slot, c := range ch {
				b.Reset()
				nqgCompound(&b, ix.Atoms[f.atom[v]], len(ch), slot, ix.Atoms[f.atom[c]])
				id, ok := compID[b.String()]
				if !ok {
					id = int32(len(ix.Compounds))
					compID[b.String()] = id
					ix.Compounds = append(ix.Compounds, b.String())
				}
				counts[id]++
			}
		}
		ix.Examples[i].Compounds = sortedEntries(counts)
		bar.Add(1)
	}
	return ix, nil
}

// nqgCompound writes parent(_, child, _): arity slots, the slot-th
// holding child, labels quoted as in the Keysers compounds' text.
func nqgCompound(b *strings.Builder, parent string, arity, slot int, child string) {
	b.WriteString(quoteLabel(parent))
	b.WriteByte('(')
	for i := 0; i < arity; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == slot {
			b.WriteString(quoteLabel(child))
		} else {
			b.WriteByte('_')
		}
	}
	b.WriteByte(')')
}
