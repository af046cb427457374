package split

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// nlsSplitParams is split.json's "params" for an n-LS split.
type nlsSplitParams struct {
	NLSConfig
	// Seed drives the half variant's draws.
	Seed uint64 `json:"seed"`
	// Tree says where programs came from.
	Tree string `json:"tree"`
	// Index is the split's rank among all candidates (0 = hardest).
	Index int `json:"index"`
	// Split describes the held-out structures.
	Split NLSSplit `json:"split"`
}

// RunNLS runs an n-LS split job (settings j.NLS) over j.Pool, programs from
// j.Tree: it lists the candidate splits, hardest first, or writes one
// (Pick.Index) or each (Pick.All). The statistics use compounds up to
// j.Compounds.MaxSize.
func (j *Job) RunNLS(ctx context.Context, pick Pick, out Out) (Written, error) {
	rep := progress.Or(j.Progress)
	pool, trees, err := j.nlsTrees(rep)
	if err != nil {
		return Written{}, err
	}
	splits, err := NLS(trees, j.NLS, data.SubRand(j.Seed, "split/nls"), rep)
	if err != nil {
		return Written{}, err
	}
	if pick.List {
		return Written{Candidates: len(splits)}, WriteNLSList(out.Table, splits)
	}
	which := []int{pick.Index}
	if pick.All {
		which = which[:0]
		for i := range splits {
			which = append(which, i)
		}
	} else if pick.Index < 0 || pick.Index >= len(splits) {
		return Written{}, &IndexError{fmt.Errorf("--index %d out of range (there are %d splits)", pick.Index, len(splits))}
	}
	dirOf := func(i int) string {
		if pick.All {
			return filepath.Join(out.Dir, strconv.Itoa(i))
		}
		return out.Dir
	}
	for _, i := range which {
		if err := out.check(dirOf(i)); err != nil {
			return Written{}, err
		}
	}
	ix, err := structure.Build(trees, structure.CompoundConfig{MaxSize: j.Compounds.MaxSize}, rep)
	if err != nil {
		return Written{}, err
	}
	an, _ := ParseAnonymizer("generic")
	prov, err := out.provenance()
	if err != nil {
		return Written{}, err
	}
	for _, i := range which {
		if err := ctx.Err(); err != nil {
			return Written{}, err
		}
		sp := splits[i]
		params := nlsSplitParams{NLSConfig: j.NLS, Seed: j.Seed, Tree: string(j.Tree), Index: i, Split: sp}
		res := NewResult("nls", params, pool, ix, sp.Assignment(), an)
		res.Provenance = prov
		if err := Write(dirOf(i), res, pool, out.Force); err != nil {
			return Written{}, err
		}
		if !pick.All {
			return Written{Result: res, Candidates: len(splits)}, nil
		}
	}
	return Written{Splits: len(which), Candidates: len(splits)}, nil
}

// nlsTrees returns the pool's program trees, dropping (SkipBad) or
// refusing records whose program does not parse.
func (j *Job) nlsTrees(rep progress.Reporter) ([]data.Record, []*data.Tree, error) {
	if !j.SkipBad {
		trees, err := Trees(j.Pool, j.Tree)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w (use --skip-bad to drop such records)", j.PoolName, err)
		}
		return j.Pool, trees, nil
	}
	pool, trees, bad := SkipBad(j.Pool, j.Tree)
	if len(bad) > 0 {
		rep.Notef("split nls: skipped %d records whose program does not parse (first: %q)", len(bad), bad[0])
	}
	return pool, trees, nil
}

// WriteNLSList prints n-LS candidate splits as an aligned table, their
// index first.
func WriteNLSList(w io.Writer, splits []NLSSplit) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "index\tseed\tthreshold\theld-out\ttrain\ttest\ttest-templates\teasiness")
	for i, sp := range splits {
		fmt.Fprintf(tw, "%d\t%s\t%.3f\t%d\t%d\t%d\t%.3f\t%.4f\n", i, sp.Seed, sp.Threshold, len(sp.HeldOut), len(sp.Train), len(sp.Test), sp.TemplateFrac, sp.Easiness)
	}
	return tw.Flush()
}
