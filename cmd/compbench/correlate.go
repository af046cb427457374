package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/eval"
)

// minCorrPoints is the fewest splits correlate accepts.
const minCorrPoints = 3

func runCorrelate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("correlate", "correlate (--split DIR ... --pred NAME ... | --points FILE) [flags]",
		`Pearson correlation across splits between a split-level prediction and the
mean exact match of the models on it (Bogin et al. §5.2, Table 5; Keysers
et al. Fig. 2). Each --split DIR holds test.jsonl, the models' predictions
(--pred names files inside DIR), and easiness.jsonl (--x easiness: mean ê
of the test examples) or split.json (--x divergence: its compound
divergence). --points reads precomputed {"split","x","y"} lines instead.`, stderr)
	var splits, preds listFlag
	fs.Var(&splits, "split", "split `DIR` (repeat)")
	fs.Var(&preds, "pred", "predictions file `NAME` inside each split folder (repeat)")
	x := fs.String("x", "easiness", "split-level predictor: easiness or divergence")
	points := fs.String("points", "", "JSONL `FILE` of {\"split\",\"x\",\"y\"} instead of --split")
	plot := fs.String("plot", "", "draw a scatter plot to `FILE` (.svg)")
	normalize := fs.String("normalize", "", "normalizers for exact match (see compbench eval)")
	allowMissing := fs.Bool("allow-missing", false, "score even if ids are missing")
	force := fs.Bool("force", false, "replace an existing plot")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*points == "") == (len(splits) == 0) {
		return usagef("give either --points or at least one --split")
	}
	if len(splits) > 0 && len(preds) == 0 {
		return usagef("--split needs at least one --pred")
	}
	if *x != "easiness" && *x != "divergence" {
		return usagef("--x must be easiness or divergence, not %q", *x)
	}
	if *plot != "" {
		if !strings.EqualFold(filepath.Ext(*plot), ".svg") {
			return usagef("--plot: only .svg is supported")
		}
		if err := checkNotInput(files("--plot", *plot), files("--points", *points)); err != nil {
			return err
		}
		if err := data.CheckFree(*plot, *force); err != nil {
			return err
		}
	}
	ns, err := eval.ParseNormalizers(*normalize, eval.DefaultSeparator)
	if err != nil {
		return usagef("--normalize: %v", err)
	}
	var pts []eval.CorrPoint
	if *points != "" {
		if pts, err = eval.ReadPoints(*points); err != nil {
			return err
		}
	}
	for _, dir := range splits {
		p, err := eval.SplitPoint(dir, preds, *x, *allowMissing, eval.Options{Normalizers: ns})
		if err != nil {
			return err
		}
		pts = append(pts, p)
	}
	// With two points r is ±1 whatever the data, so it says nothing.
	if len(pts) < minCorrPoints {
		return fmt.Errorf("correlate: %d split(s); a correlation needs at least %d (with 2, Pearson r is always ±1): give more --split folders or --points lines", len(pts), minCorrPoints)
	}
	c, err := eval.Correlate(*x, pts)
	if err != nil {
		return err
	}
	if *plot != "" {
		if err := data.WriteOutput(*plot, *force, c.Plot().WriteSVG); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(stdout, c)
	}
	return c.WriteTable(stdout)
}
