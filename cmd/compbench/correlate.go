package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"compbench/data"
	"compbench/eval"
)

// corrPoint is one split: its predicted difficulty measure and mean EM.
type corrPoint struct {
	Split string  `json:"split"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

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
	var pts []corrPoint
	if *points != "" {
		if pts, err = readPoints(*points); err != nil {
			return err
		}
	}
	for _, dir := range splits {
		p, err := splitPoint(dir, preds, *x, *allowMissing, eval.Options{Normalizers: ns})
		if err != nil {
			return err
		}
		pts = append(pts, p)
	}
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.X, p.Y
	}
	// With two points r is ±1 whatever the data, so it says nothing.
	if len(pts) < minCorrPoints {
		return fmt.Errorf("correlate: %d split(s); a correlation needs at least %d (with 2, Pearson r is always ±1): give more --split folders or --points lines", len(pts), minCorrPoints)
	}
	r, err := eval.Pearson(xs, ys)
	if err != nil {
		return err
	}
	if *plot != "" {
		pl := eval.Plot{Title: fmt.Sprintf("mean EM vs %s (Pearson r = %.3f)", *x, r), XLabel: *x, YLabel: "mean exact match", X: xs, Y: ys}
		for _, p := range pts {
			pl.Labels = append(pl.Labels, p.Split)
		}
		set := data.NewOutputSet(*force)
		defer set.Abort()
		w, err := set.Create(*plot)
		if err != nil {
			return err
		}
		if err := pl.WriteSVG(w); err != nil {
			return err
		}
		if err := set.Commit(); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(stdout, struct {
			Pearson float64     `json:"pearson"`
			N       int         `json:"n"`
			X       string      `json:"x"`
			Points  []corrPoint `json:"points"`
		}{r, len(pts), *x, pts})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "split\t%s\tmean-EM\n", *x)
	for _, p := range pts {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", p.Split, p.X, p.Y)
	}
	fmt.Fprintf(tw, "\nPearson r\t%.4f\t(n = %d splits)\n", r, len(pts))
	return tw.Flush()
}

func splitPoint(dir string, preds []string, x string, allowMissing bool, opt eval.Options) (corrPoint, error) {
	p := corrPoint{Split: dir}
	gold, err := data.ReadRecords(filepath.Join(dir, "test.jsonl"))
	if err != nil {
		return p, err
	}
	paths := make([]string, len(preds))
	for i, n := range preds {
		paths[i] = filepath.Join(dir, n)
	}
	_, sums, err := eval.Models(gold, paths, allowMissing, opt)
	if err != nil {
		return p, err
	}
	for _, s := range sums {
		p.Y += s.Accuracy / float64(len(sums))
	}
	switch x {
	case "easiness":
		path := filepath.Join(dir, "easiness.jsonl")
		es, err := eval.ReadEasiness(path)
		if err != nil {
			return p, err
		}
		for _, g := range gold {
			e, ok := es[g.ID]
			if !ok {
				return p, fmt.Errorf("%s: no easiness for test id %q", path, g.ID)
			}
			p.X += e / float64(len(gold))
		}
	case "divergence":
		path := filepath.Join(dir, "split.json")
		b, err := data.ReadFileLimit(path, data.SplitFile)
		if err != nil {
			return p, err
		}
		var sj struct {
			Stats struct {
				CD *float64 `json:"compound_divergence"`
			} `json:"stats"`
		}
		if err := json.Unmarshal(b, &sj); err != nil {
			return p, fmt.Errorf("%s: %w", path, err)
		}
		if sj.Stats.CD == nil {
			return p, fmt.Errorf("%s: stats have no compound_divergence", path)
		}
		p.X = *sj.Stats.CD
	}
	return p, nil
}

func readPoints(path string) ([]corrPoint, error) {
	f, err := data.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pts []corrPoint
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var p struct {
			Split string   `json:"split"`
			X     *float64 `json:"x"`
			Y     *float64 `json:"y"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if p.X == nil || p.Y == nil {
			return nil, fmt.Errorf("%s: line %d: want numeric \"x\" and \"y\"", path, line)
		}
		pts = append(pts, corrPoint{Split: p.Split, X: *p.X, Y: *p.Y})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pts, nil
}
