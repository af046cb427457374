package report

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"compbench/sweep"
)

// Figures draws the report's plots. First, when the cells carry compound
// divergences, Keysers et al.'s Figure 2: test exact match against
// compound divergence, one series per model, with error bars over seeds.
// Then for every cell group its training loss and dev exact match against
// step, one line per seed, and the ROC curves of predicted easiness where
// the cells computed it.
func (r *Report) Figures() ([]Figure, error) {
	var figs []Figure
	if f, err := r.divergenceFigure(); err != nil {
		return nil, err
	} else if f != nil {
		figs = append(figs, *f)
	}
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if g.Pooled {
			continue
		}
		curves, err := r.curveFigures(g)
		if err != nil {
			return nil, err
		}
		figs = append(figs, curves...)
		roc, err := r.rocFigure(g)
		if err != nil {
			return nil, err
		}
		if roc != nil {
			figs = append(figs, *roc)
		}
	}
	return figs, nil
}

// divergenceFigure is Keysers et al. (2020), Figure 2: each split's mean
// test exact match over seeds against its compound divergence, ± one
// sample standard deviation, one series per model.
func (r *Report) divergenceFigure() (*Figure, error) {
	type series struct {
		xy   plotter.XYs
		sd   []float64
		data []string
	}
	byModel := map[string]*series{}
	var models []string
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if g.Pooled || g.Divergence.N == 0 || g.TestEM.N == 0 {
			continue
		}
		m := strings.TrimPrefix(g.Cell.Group(), g.Cell.Data+" ")
		s, ok := byModel[m]
		if !ok {
			s = &series{}
			byModel[m] = s
			models = append(models, m)
		}
		s.xy = append(s.xy, plotter.XY{X: g.Divergence.Mean, Y: g.TestEM.Mean})
		s.sd = append(s.sd, g.TestEM.SD)
		s.data = append(s.data, g.Cell.Data)
	}
	if len(models) == 0 {
		return nil, nil
	}
	sort.Strings(models)
	f := newFigure("accuracy-vs-divergence", "Test exact match against compound divergence",
		"compound divergence", "test exact match", Plain, Percent, 5*vg.Inch, 3.2*vg.Inch)
	f.Caption = "As Keysers et al. (2020), Figure 2: one point per split and model, the mean test exact match over seeds with error bars of ± one sample standard deviation (none for one seed); D_C is the split's compound divergence from its split.json. Points of different models at one D_C are set slightly apart."
	var pts []*errorPoints
	for i, m := range models {
		s := byModel[m]
		e := newErrorPoints(i, len(models), s.xy, s.sd)
		f.p.Add(e)
		f.legend.Add(m, e)
		pts = append(pts, e)
	}
	// Each split is named once, beside its highest point.
	labels := &pointLabels{avoid: pts, style: text.Style{Color: color.Gray{0x33}, Font: font.From(sans, 8), Handler: plot.DefaultTextHandler}}
	at := map[string]int{}
	for k, m := range models {
		s := byModel[m]
		for i, d := range s.data {
			j, ok := at[d]
			if !ok {
				at[d] = len(labels.names)
				labels.names = append(labels.names, d)
				labels.xy = append(labels.xy, s.xy[i])
				labels.dodge = append(labels.dodge, pts[k].dodge)
			} else if s.xy[i].Y > labels.xy[j].Y {
				labels.xy[j], labels.dodge[j] = s.xy[i], pts[k].dodge
			}
		}
	}
	f.p.Add(labels)
	fromZero(&f.p.X)
	fixRange(&f.p.Y, 0, 1)
	return f, nil
}

// curveFigures are a group's training loss and dev exact match against
// step, one line per seed.
func (r *Report) curveFigures(g *Group) ([]Figure, error) {
	name := g.Cell.Group()
	loss := newFigure("loss-"+name, "Training loss", "step", "training loss", Plain, Plain, 3.25*vg.Inch, 2.3*vg.Inch)
	dev := newFigure("dev-em-"+name, "Dev exact match", "step", "dev exact match", Plain, Percent, 3.25*vg.Inch, 2.3*vg.Inch)
	loss.Group, dev.Group = name, name
	// Steps run to 100,000 and more: four intervals keep wide labels apart.
	loss.p.X.Tick.Marker, dev.p.X.Tick.Marker = Ticks{Intervals: 4}, Ticks{Intervals: 4}
	loss.Caption = "Training loss of each seed."
	hasLoss, hasDev := false, false
	for k, i := range g.Runs {
		run := r.Runs[i]
		seed := "seed " + strconv.FormatUint(run.Result.Cell.Seed, 10)
		var ls, ds plotter.XYs
		for _, l := range run.Curve {
			if l.Loss != nil {
				ls = append(ls, plotter.XY{X: float64(l.Step), Y: *l.Loss})
			}
			if l.DevEM != nil {
				ds = append(ds, plotter.XY{X: float64(l.Step), Y: *l.DevEM})
			}
		}
		if len(ls) > 0 {
			if err := loss.addLine(k, seed, ls, false); err != nil {
				return nil, err
			}
			hasLoss = true
		}
		if len(ds) > 0 {
			if err := dev.addLine(k, seed, ds, len(ds) <= 40); err != nil {
				return nil, err
			}
			hasDev = true
		}
	}
	var figs []Figure
	if hasLoss {
		fromZero(&loss.p.X)
		fromZero(&loss.p.Y)
		figs = append(figs, *loss)
	}
	if hasDev {
		fromZero(&dev.p.X)
		fixRange(&dev.p.Y, 0, 1)
		dev.Caption = "Exact match on the dev set at each evaluation during training (the report's dev EM is the best of these)."
		figs = append(figs, *dev)
	}
	return figs, nil
}

// rocFigure draws the ROC curves of predicted easiness against zero-shot
// correctness, one per seed, for a group whose cells computed easiness.
// Curves that cannot say anything are left out, and the figure says why:
// with one easiness value for every example the curve is the diagonal by
// construction, and with every prediction right (or wrong) there is none.
func (r *Report) rocFigure(g *Group) (*Figure, error) {
	name := g.Cell.Group()
	f := newFigure("roc-"+name, "Easiness ROC", "false positive rate", "true positive rate", Plain, Plain, 3.25*vg.Inch, 2.3*vg.Inch)
	f.Group = name
	var reasons []string          // why curves are left out, in order
	left := map[string][]string{} // the seeds left out for each reason
	drawn, computed := 0, 0
	for _, i := range g.Runs {
		run := r.Runs[i]
		if _, err := os.Stat(filepath.Join(run.Dir, sweep.EasinessFile)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		computed++
		seed := strconv.FormatUint(run.Result.Cell.Seed, 10)
		auc, roc, ok, err := sweep.EasinessROC(run.Dir)
		if err != nil {
			return nil, err
		}
		why := ""
		switch {
		case !ok && run.Result.TestEM > 0.5: // one class only: all right or all wrong
			why = "every test prediction is right, so there is no curve"
		case !ok:
			why = "every test prediction is wrong, so there is no curve"
		case len(roc) <= 2:
			why = "every test example has the same predicted easiness, so the curve is the diagonal by construction (AUC 0.5) and tells nothing"
			if roc[len(roc)-1].Threshold == 1 {
				why = "every test example has predicted easiness 1 (all its local structures occur in training, as on a random split), so the curve is the diagonal by construction (AUC 0.5) and tells nothing"
			}
		default:
			xy := make(plotter.XYs, len(roc))
			for j, pt := range roc {
				xy[j] = plotter.XY{X: pt.FPR, Y: pt.TPR}
			}
			if err := f.addLine(drawn, fmt.Sprintf("seed %s (AUC %.3f)", seed, auc), xy, false); err != nil {
				return nil, err
			}
			drawn++
			continue
		}
		if len(left[why]) == 0 {
			reasons = append(reasons, why)
		}
		left[why] = append(left[why], seed)
	}
	if computed == 0 {
		return nil, nil
	}
	var notes []string
	for _, why := range reasons {
		seeds := left[why]
		label := "seed " + seeds[0]
		if n := len(seeds); n > 1 {
			label = "seeds " + strings.Join(seeds[:n-1], ", ") + " and " + seeds[n-1]
		}
		notes = append(notes, label+": "+why)
	}
	note := ""
	if len(notes) > 0 {
		note = "No curve for " + strings.Join(notes, "; ") + "."
	}
	if drawn == 0 {
		return &Figure{Name: f.Name, Title: f.Title, Group: name, Omitted: note}, nil
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.Color, diag.Dashes = palette[7], []vg.Length{vg.Points(3), vg.Points(3)}
	f.p.Add(diag)
	fixRange(&f.p.X, 0, 1)
	fixRange(&f.p.Y, 0, 1)
	f.Caption = strings.TrimSpace("Predicted easiness against zero-shot correctness; the dashed diagonal is a score that says nothing. " + note)
	return f, nil
}
