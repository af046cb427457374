package split

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"compbench/data"
	"compbench/data/scfg"
	"compbench/data/structure"
	"compbench/progress"
)

// GrammarJob is the grammar method's settings (Job.RunGrammar).
type GrammarJob struct {
	Grammar *scfg.Grammar
	// GrammarName is the grammar's file; split.json names its base.
	GrammarName string
	Config      GrammarConfig
	// MaxBytes bounds what Pick.All writes.
	MaxBytes int64
}

// grammarSplitParams is split.json's "params" for a grammar split.
type grammarSplitParams struct {
	// Grammar is the grammar file's name.
	Grammar string `json:"grammar"`
	GrammarParams
	// MaxSize is the largest compound used by the statistics.
	MaxSize int `json:"compound_max_size"`
}

// RunGrammar runs a grammar split job over j.Pool: it lists the candidate
// splits, or writes one (Pick.Index) or every valid one (Pick.All). The
// statistics use compounds up to j.Compounds.MaxSize.
func (j *Job) RunGrammar(ctx context.Context, pick Pick, out Out) (Written, error) {
	rep := progress.Or(j.Progress)
	s, err := NewGrammarSplitter(j.Grammar.Grammar, j.Pool, j.Grammar.Config)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", j.PoolName, err)
	}
	if pick.List {
		cands := grammarCandidates(s, rep)
		return Written{Candidates: len(cands)}, WriteGrammarList(out.Table, cands)
	}
	// --all: find the valid candidates, estimate what they take on disk and
	// refuse if that is over MaxBytes or any target exists, all before the
	// compound index is built, so a refusal costs seconds. Every split
	// folder copies its records: 1,000 splits of a 5,000-record COVR pool
	// are over 10 GB.
	var valid []int
	var nCands int
	if pick.All {
		if valid, nCands, err = j.grammarValid(s, out, rep); err != nil {
			return Written{}, err
		}
	}
	trees, err := Trees(j.Pool, structure.TreeAuto)
	if err != nil {
		return Written{}, fmt.Errorf("%s: %w", j.PoolName, err)
	}
	ix, err := structure.Build(trees, structure.CompoundConfig{MaxSize: j.Compounds.MaxSize}, rep)
	if err != nil {
		return Written{}, err
	}
	anon, err := ParseAnonymizer("generic")
	if err != nil {
		return Written{}, err
	}
	prov, err := out.provenance()
	if err != nil {
		return Written{}, err
	}
	write := func(c *GrammarCandidate, dir string) (*Result, error) {
		params := grammarSplitParams{Grammar: filepath.Base(j.Grammar.GrammarName), GrammarParams: s.Params(c), MaxSize: j.Compounds.MaxSize}
		a := Assignment{Train: c.Train, Dev: c.Dev, Test: c.Test}
		res := NewResult("grammar", params, j.Pool, ix, a, anon)
		res.Provenance = prov
		return res, Write(dir, res, j.Pool, out.Force)
	}
	if !pick.All {
		c, err := s.Candidate(pick.Index)
		if err != nil {
			return Written{}, &IndexError{err}
		}
		if err := c.Invalid(); err != nil {
			return Written{}, err
		}
		res, err := write(&c, out.Dir)
		return Written{Result: res, Candidates: s.Len()}, err
	}
	return j.writeGrammarAll(ctx, s, valid, nCands, out, rep, write)
}

// grammarCandidates evaluates every candidate, with a progress bar.
func grammarCandidates(s *GrammarSplitter, rep progress.Reporter) []GrammarCandidate {
	bar := rep.Bar("grammar splits", int64(s.Len()))
	cands := s.Candidates(func() { bar.Add(1) })
	bar.Finish()
	return cands
}

// grammarValid returns the valid candidates' indexes and the number of
// candidates, refusing when their folders would be over MaxBytes or one
// is not free (out.Check).
func (j *Job) grammarValid(s *GrammarSplitter, out Out, rep progress.Reporter) ([]int, int, error) {
	cands := grammarCandidates(s, rep)
	perRecord, err := recordBytes(j.Pool)
	if err != nil {
		return nil, 0, err
	}
	var valid []int
	var total float64
	for _, c := range cands {
		if c.Valid {
			valid = append(valid, c.Index)
			total += splitBytes(perRecord, c.NTrain+c.NDev+c.NTest)
		}
	}
	if len(valid) == 0 {
		return nil, 0, fmt.Errorf("split grammar: none of the %d candidate splits is valid", len(cands))
	}
	if total > float64(j.Grammar.MaxBytes) {
		return nil, 0, &SizeError{Splits: len(valid), Total: total, Max: j.Grammar.MaxBytes}
	}
	for _, k := range valid {
		if err := out.check(filepath.Join(out.Dir, strconv.Itoa(k))); err != nil {
			return nil, 0, err
		}
	}
	return valid, len(cands), nil
}

// writeGrammarAll writes each valid candidate's folder (each one
// all-or-nothing), a row of out.Table for each.
func (j *Job) writeGrammarAll(ctx context.Context, s *GrammarSplitter, valid []int, nCands int, out Out, rep progress.Reporter,
	write func(*GrammarCandidate, string) (*Result, error)) (Written, error) {
	bar := rep.Bar("writing splits", int64(len(valid)))
	defer bar.Finish()
	fmt.Fprintln(out.Table, "index\ttrain\tdev\ttest\tatom_div\tcompound_div")
	for _, k := range valid {
		if err := ctx.Err(); err != nil {
			return Written{}, err
		}
		c, err := s.Candidate(k)
		if err != nil {
			return Written{}, err
		}
		res, err := write(&c, filepath.Join(out.Dir, strconv.Itoa(k)))
		if err != nil {
			return Written{}, err
		}
		st := res.Stats
		fmt.Fprintf(out.Table, "%d\t%d\t%d\t%d\t%s\t%s\n", k, st.TrainSize, st.DevSize, st.TestSize, fmtDiv(st.AtomDivergence), fmtDiv(st.CompoundDivergence))
		bar.Add(1)
	}
	return Written{Splits: len(valid), Candidates: nCands}, nil
}

func fmtDiv(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *p)
}

// recordBytes returns the mean bytes of one record as a split writes it: its
// JSONL line in a part file plus its id in split.json.
func recordBytes(pool []data.Record) (float64, error) {
	var n countWriter
	enc := data.NewEncoder(&n)
	for i := range pool {
		if err := enc.Encode(&pool[i]); err != nil {
			return 0, err
		}
		n += countWriter(len(pool[i].ID) + 8) // "id",\n and indentation in split.json
	}
	return float64(n) / float64(max(len(pool), 1)), nil
}

// splitBytes estimates one split folder: its records, and split.json's
// parameters and statistics (a few KiB).
func splitBytes(perRecord float64, records int) float64 {
	return perRecord*float64(records) + 4<<10
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
