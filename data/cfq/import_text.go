package cfq

import (
	"context"
	"fmt"
	"io"

	"compbench/data"
	"compbench/progress"
)

// TextOptions describe the import of a text release (CFQ's MCD1 zip, or
// the folder CFQ's preprocessing writes); the caller has checked that
// there is an output and that no output is the release.
type TextOptions struct {
	Src    string // the zip or folder
	Out    string // every example, train then dev then test, when set
	OutDir string // the parts as train.jsonl, dev.jsonl, test.jsonl, when set
	Force  bool
	Status io.Writer // progress, or nil
}

// ImportText writes a text release's parts as records. The outputs appear
// together or, on an error, not at all.
func ImportText(ctx context.Context, o TextOptions) (Summary, error) {
	outs := PartPaths(o.OutDir)
	if o.OutDir == "" {
		outs = nil
	}
	for _, p := range append([]string{o.Out}, outs...) {
		if p == "" {
			continue
		}
		if err := data.CheckFree(p, o.Force); err != nil {
			return Summary{}, err
		}
	}
	rel, err := OpenText(o.Src)
	if err != nil {
		return Summary{}, fmt.Errorf("cfq import: %w", err)
	}
	defer rel.Close()

	set := data.NewOutputSet(o.Force)
	all, err := createEncoder(set, o.Out)
	if err != nil {
		return Summary{}, err
	}
	bar := progress.New(o.Status, "import", rel.Size())
	defer bar.Finish()
	var counts [4]int
	for p := Train; p <= Test; p++ {
		var enc *data.Encoder
		if outs != nil {
			if enc, err = createEncoder(set, outs[p-Train]); err != nil {
				set.Abort()
				return Summary{}, err
			}
		}
		if err := textPart(ctx, rel, p, &counts[p], bar, all, enc); err != nil {
			set.Abort()
			return Summary{}, fmt.Errorf("cfq import: %s: %w", o.Src, err)
		}
	}
	if err := set.Commit(); err != nil {
		return Summary{}, err
	}
	return Summary{
		Records: counts[Train] + counts[Dev] + counts[Test],
		Train:   counts[Train], Dev: counts[Dev], Test: counts[Test],
	}, nil
}

// textPart writes part p of rel to the encoders that are set, counting its
// examples in *count.
func textPart(ctx context.Context, rel *TextRelease, p int8, count *int, bar *progress.Bar, encs ...*data.Encoder) error {
	return rel.Each(p, func(rec *data.Record, n int64) error {
		if *count%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		*count++
		bar.Add(n)
		for _, e := range encs {
			if e != nil {
				if err := e.Encode(rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
