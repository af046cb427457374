package train

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"compbench/data"
	"compbench/engine"
	"compbench/progress"
	"compbench/provenance"
)

// Experiment is Shi et al.'s protocol for one benchmark (§5): train each
// model, decode the test set (zero-shot), fine-tune on the few-shot set
// and decode again.
type Experiment struct {
	// Configs are the models' training configs, one run each; a run's
	// folder is Dir/<variant>, its fine-tuned copy Dir/<variant>-ft.
	Configs []Config
	// Dir holds the run folders.
	Dir string
	// Train, Dev, Test and Finetune are the benchmark's records.
	Train, Dev, Test, Finetune []data.Record
	// FinetuneSteps and FinetuneLR: the few-shot stage (0 steps: skip it).
	FinetuneSteps int
	FinetuneLR    float64
	// Beam is the decoding beam (1: greedy); beams use Shi et al.'s
	// length penalty 0.6.
	Beam int
	// Force replaces existing runs and predictions.
	Force bool
	// Backend runs every stage (nil: the CPU).
	Backend engine.Backend
	// Provenance, when set, starts each run's provenance.jsonl.
	Provenance *provenance.Record
	// Progress receives progress bars and notes (nil: none).
	Progress progress.Reporter
}

// ExperimentRow is one model's result.
type ExperimentRow struct {
	// Variant is the model.
	Variant string
	// Steps trained and the best dev exact match (-1 without a dev set).
	Steps int
	DevEM float64
	// ZeroShot and FewShot are test exact match before and after
	// fine-tuning (FewShot -1 when skipped).
	ZeroShot, FewShot float64
	// Elapsed is the model's wall time, every stage included.
	Elapsed time.Duration
}

// Run runs the experiment; each run folder gets test.preds.jsonl.
func (e *Experiment) Run(ctx context.Context) ([]ExperimentRow, error) {
	var rows []ExperimentRow
	for _, cfg := range e.Configs {
		name := cfg.Model.Variant
		start := time.Now()
		dir := filepath.Join(e.Dir, name)
		progress.Or(e.Progress).Notef("training %s in %s", name, dir)
		res, err := Train(ctx, cfg, Options{Dir: dir, Train: e.Train, Dev: e.Dev, Force: e.Force, Progress: e.Progress, Backend: e.Backend, Provenance: e.Provenance})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		row := ExperimentRow{Variant: name, Steps: res.Steps, DevEM: res.DevEM, FewShot: -1}
		if row.ZeroShot, err = e.predictEM(ctx, dir); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if e.FinetuneSteps > 0 {
			base, err := OpenRun(dir, true)
			if err != nil {
				return nil, err
			}
			ftDir := dir + "-ft"
			if _, err := Finetune(ctx, base, e.Finetune, FinetuneOptions{Steps: e.FinetuneSteps, LR: e.FinetuneLR, Out: ftDir, Force: e.Force, Progress: e.Progress, Backend: e.Backend}); err != nil {
				return nil, fmt.Errorf("%s: fine-tune: %w", name, err)
			}
			if row.FewShot, err = e.predictEM(ctx, ftDir); err != nil {
				return nil, fmt.Errorf("%s: fine-tuned: %w", name, err)
			}
		}
		row.Elapsed = time.Since(start)
		rows = append(rows, row)
	}
	return rows, nil
}

// predictEM decodes the test set with the run in dir (best checkpoint),
// writes dir/test.preds.jsonl and returns the exact match.
func (e *Experiment) predictEM(ctx context.Context, dir string) (float64, error) {
	r, err := OpenRun(dir, true)
	if err != nil {
		return 0, err
	}
	release, err := r.UseBackend(e.Backend)
	if err != nil {
		return 0, err
	}
	defer release()
	preds, _, err := Predict(ctx, r, e.Test, DecodeOptions{Beam: e.Beam, Alpha: 0.6, Batch: 64}, e.Progress)
	if err != nil {
		return 0, err
	}
	if err := WritePredictions(filepath.Join(dir, "test.preds.jsonl"), preds, e.Force); err != nil {
		return 0, err
	}
	return ExactMatch(e.Test, preds), nil
}

// WritePredictions writes preds as JSONL at path, all or nothing; an
// existing file is replaced only with force.
func WritePredictions(path string, preds []Prediction, force bool) error {
	set := data.NewOutputSet(force)
	w, err := set.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range preds {
		if err := enc.Encode(&preds[i]); err != nil {
			set.Abort()
			return err
		}
	}
	return set.Commit()
}

// ExperimentTable is the results table of rows (Markdown).
func ExperimentTable(rows []ExperimentRow) string {
	t := "| model | steps | dev EM | test EM zero-shot | test EM few-shot | time |\n|---|---|---|---|---|---|\n"
	for _, r := range rows {
		few := "-"
		if r.FewShot >= 0 {
			few = fmt.Sprintf("%.1f", 100*r.FewShot)
		}
		t += fmt.Sprintf("| %s | %d | %.1f | %.1f | %s | %s |\n", r.Variant, r.Steps, 100*r.DevEM, 100*r.ZeroShot, few, r.Elapsed.Round(time.Second))
	}
	return t
}
