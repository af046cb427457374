package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"compbench/data"
)

// CorrPoint is one split: its split-level prediction X (mean easiness or
// compound divergence) and the mean exact match Y of the models on it.
type CorrPoint struct {
	Split string  `json:"split"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

// Correlation is Pearson's r across splits between X and Y (Bogin et al.
// §5.2, Table 5; Keysers et al. Fig. 2).
type Correlation struct {
	Pearson float64     `json:"pearson"`
	N       int         `json:"n"`
	X       string      `json:"x"`
	Points  []CorrPoint `json:"points"`
}

// Correlate computes r over pts, whose X is the predictor named x.
func Correlate(x string, pts []CorrPoint) (*Correlation, error) {
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.X, p.Y
	}
	r, err := Pearson(xs, ys)
	if err != nil {
		return nil, err
	}
	return &Correlation{r, len(pts), x, pts}, nil
}

// Plot is the scatter plot of the points, labelled by split.
func (c *Correlation) Plot() Plot {
	p := Plot{Title: fmt.Sprintf("mean EM vs %s (Pearson r = %.3f)", c.X, c.Pearson), XLabel: c.X, YLabel: "mean exact match"}
	for _, pt := range c.Points {
		p.X, p.Y, p.Labels = append(p.X, pt.X), append(p.Y, pt.Y), append(p.Labels, pt.Split)
	}
	return p
}

// WriteTable writes one row per split and r.
func (c *Correlation) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "split\t%s\tmean-EM\n", c.X)
	for _, p := range c.Points {
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", p.Split, p.X, p.Y)
	}
	fmt.Fprintf(tw, "\nPearson r\t%.4f\t(n = %d splits)\n", c.Pearson, c.N)
	return tw.Flush()
}

// SplitPoint reads the split folder dir: its test.jsonl, the predictions
// files preds inside it (Y: their mean exact match) and, for X,
// easiness.jsonl (x "easiness": the test examples' mean predicted
// easiness) or split.json (x "divergence": its compound divergence).
func SplitPoint(dir string, preds []string, x string, allowMissing bool, opt Options) (CorrPoint, error) {
	p := CorrPoint{Split: dir}
	gold, err := data.ReadRecords(filepath.Join(dir, "test.jsonl"))
	if err != nil {
		return p, err
	}
	paths := make([]string, len(preds))
	for i, n := range preds {
		paths[i] = filepath.Join(dir, n)
	}
	_, sums, err := Models(gold, paths, allowMissing, opt)
	if err != nil {
		return p, err
	}
	for _, s := range sums {
		p.Y += s.Accuracy / float64(len(sums))
	}
	switch x {
	case "easiness":
		p.X, err = meanEasiness(filepath.Join(dir, "easiness.jsonl"), gold)
	case "divergence":
		p.X, err = splitDivergence(filepath.Join(dir, "split.json"))
	}
	return p, err
}

// meanEasiness is the mean predicted easiness of the gold examples.
func meanEasiness(path string, gold []data.Record) (float64, error) {
	es, err := ReadEasiness(path)
	if err != nil {
		return 0, err
	}
	mean := 0.0
	for _, g := range gold {
		e, ok := es[g.ID]
		if !ok {
			return 0, fmt.Errorf("%s: no easiness for test id %q", path, g.ID)
		}
		mean += e / float64(len(gold))
	}
	return mean, nil
}

// splitDivergence is the compound divergence a split.json records.
func splitDivergence(path string) (float64, error) {
	b, err := data.ReadFileLimit(path, data.SplitFile)
	if err != nil {
		return 0, err
	}
	var sj struct {
		Stats struct {
			CD *float64 `json:"compound_divergence"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &sj); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if sj.Stats.CD == nil {
		return 0, fmt.Errorf("%s: stats have no compound_divergence", path)
	}
	return *sj.Stats.CD, nil
}

// ReadPoints reads precomputed {"split","x","y"} lines.
func ReadPoints(path string) ([]CorrPoint, error) {
	f, err := data.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pts []CorrPoint
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
		pts = append(pts, CorrPoint{Split: p.Split, X: *p.X, Y: *p.Y})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pts, nil
}
