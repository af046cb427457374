// Package report aggregates the cells of sweeps and run folders into
// tables of mean ± sample standard deviation over seeds, a flat CSV, a
// table of each dataset's split statistics, and figures for a paper (SVG,
// PDF, PNG) that a self-contained HTML page shows inline.
package report

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"compbench/sweep"
)

// MetricLine is one line of a run's metrics.jsonl. compbench train writes
// three shapes, told apart by which fields are set: a training line (Loss,
// LR, GradNorm, TokensPerS), a dev line (DevLoss, DevEM) and a resume
// marker (Resumed). Other fields are ignored, so newer lines still read.
type MetricLine struct {
	Step       int      `json:"step"`
	Loss       *float64 `json:"loss"`
	LR         *float64 `json:"lr"`
	GradNorm   *float64 `json:"grad_norm"`
	TokensPerS *float64 `json:"tokens_per_s"`
	DevLoss    *float64 `json:"dev_loss"`
	DevEM      *float64 `json:"dev_em"`
	// Resumed is set on the line a resume writes.
	Resumed json.RawMessage `json:"resumed,omitempty"`
}

// Run is one finished cell (or a single run folder).
type Run struct {
	Dir    string
	Result sweep.Result
	Curve  []MetricLine
	// source is the place of the folder it was read from among Load's.
	source int
}

// Report is everything the renderers show.
type Report struct {
	// Title names the sweep or run.
	Title string
	// Runs are the finished cells in sweep order.
	Runs []Run
	// Unfinished names the cells without result.json.
	Unfinished []string
	// Groups are the runs averaged together: same data, model and
	// config values, different seeds.
	Groups []Group
	// paper, when set, adds its published numbers (SetPaper).
	paper *Paper
	// splits are the split statistics of each data name (nil: none
	// found).
	splits map[string]*SplitStats
}

// Group is one row of the table.
type Group struct {
	// Cell is the first run's cell; its seed is not meaningful.
	Cell sweep.Cell
	Runs []int
	// Pooled marks the row SetPaper adds for a published number over
	// several datasets (mcd* for MCD1-3): every run of the groups it
	// matches, whose data is the pattern; plots leave it out.
	Pooled bool
	// The metrics over the group's runs; N is 0 where no run has one.
	DevEM, TestEM, FewShotEM, TestExec, FewShotExec, TrainSeconds, Divergence, EasinessAUC Stat
}

// Stat is a mean and sample standard deviation over n values.
type Stat struct {
	N        int
	Mean, SD float64
}

// StatOf summarises xs; the standard deviation of one value is 0.
func StatOf(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// group puts runs with the same cell group together, in sweep order.
func (r *Report) group() {
	sort.SliceStable(r.Runs, func(i, j int) bool {
		a, b := r.Runs[i], r.Runs[j]
		if a.source != b.source {
			return a.source < b.source
		}
		return a.Result.Cell.Index < b.Result.Cell.Index
	})
	at := map[string]int{}
	for i, run := range r.Runs {
		k := run.Result.Cell.Group()
		g, ok := at[k]
		if !ok {
			g = len(r.Groups)
			at[k] = g
			r.Groups = append(r.Groups, Group{Cell: run.Result.Cell})
		}
		r.Groups[g].Runs = append(r.Groups[g].Runs, i)
	}
	for gi := range r.Groups {
		r.summarise(&r.Groups[gi])
	}
}

// summarise computes g's metrics over its runs.
func (r *Report) summarise(g *Group) {
	var dev, test, few, tx, fx, secs, div, auc []float64
	for _, i := range g.Runs {
		res := r.Runs[i].Result
		if res.DevEM >= 0 {
			dev = append(dev, res.DevEM)
		}
		if res.TestEM >= 0 {
			test = append(test, res.TestEM)
		}
		few = appendSet(few, res.FewShotEM)
		tx = appendSet(tx, res.TestExec)
		fx = appendSet(fx, res.FewShotExec)
		div = appendSet(div, res.CompoundDivergence)
		auc = appendSet(auc, res.EasinessAUC)
		if res.TrainSeconds > 0 {
			secs = append(secs, res.TrainSeconds)
		}
	}
	g.DevEM, g.TestEM, g.FewShotEM = StatOf(dev), StatOf(test), StatOf(few)
	g.TestExec, g.FewShotExec, g.TrainSeconds, g.Divergence, g.EasinessAUC = StatOf(tx), StatOf(fx), StatOf(secs), StatOf(div), StatOf(auc)
}

func appendSet(xs []float64, v *float64) []float64 {
	if v != nil {
		return append(xs, *v)
	}
	return xs
}

// varyKeys are the config keys varied over the report's cells, in order.
func (r *Report) varyKeys() []string {
	var keys []string
	seen := map[string]bool{}
	for _, g := range r.Groups {
		for _, v := range g.Cell.Vary {
			if !seen[v.Key] {
				seen[v.Key] = true
				keys = append(keys, v.Key)
			}
		}
	}
	return keys
}

func varyValue(c sweep.Cell, key string) string {
	for _, v := range c.Vary {
		if v.Key == key {
			return strings.Trim(string(v.Value), `"`)
		}
	}
	return ""
}

// column is one metric of the table.
type column struct {
	name    string
	stat    func(*Group) Stat
	percent bool
}

// columns are the metrics some group has.
func (r *Report) columns() []column {
	all := []column{
		{"dev EM", func(g *Group) Stat { return g.DevEM }, true},
		{"test EM zero-shot", func(g *Group) Stat { return g.TestEM }, true},
		{"test EM few-shot", func(g *Group) Stat { return g.FewShotEM }, true},
		{"test exec. acc.", func(g *Group) Stat { return g.TestExec }, true},
		{"few-shot exec. acc.", func(g *Group) Stat { return g.FewShotExec }, true},
		{"compound div.", func(g *Group) Stat { return g.Divergence }, false},
		{"easiness AUC", func(g *Group) Stat { return g.EasinessAUC }, false},
		{"train time (s)", func(g *Group) Stat { return g.TrainSeconds }, false},
	}
	var cols []column
	for _, c := range all {
		for gi := range r.Groups {
			if c.stat(&r.Groups[gi]).N > 0 {
				cols = append(cols, c)
				break
			}
		}
	}
	return cols
}

// format writes a Stat as "mean ± sd" (percent for accuracies); one value
// has no spread to show.
func (c column) format(s Stat) string {
	if s.N == 0 {
		return "-"
	}
	m, sd, prec := s.Mean, s.SD, 1
	if c.percent {
		m, sd = 100*m, 100*sd
	} else if c.name == "compound div." || c.name == "easiness AUC" {
		prec = 3
	}
	if s.N == 1 {
		return strconv.FormatFloat(m, 'f', prec, 64)
	}
	return strconv.FormatFloat(m, 'f', prec, 64) + " ± " + strconv.FormatFloat(sd, 'f', prec, 64)
}
