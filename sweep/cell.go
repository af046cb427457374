package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/eval"
	"compbench/train"
)

// Cell is one point of the grid: one training run and its evaluation.
type Cell struct {
	// Index is the cell's place in Spec.Cells (the Slurm array index).
	Index int `json:"index"`
	// Name is the stable folder name under OUT/cells.
	Name string `json:"name"`
	// Data is the task or dataset name; Task is set for generated data.
	Data string `json:"data"`
	Task string `json:"task,omitempty"`
	// Model is the model's label; Variant its compbench train --model.
	Model   string `json:"model"`
	Variant string `json:"variant"`
	// Vary are the cell's values of the config axes.
	Vary []Setting `json:"vary,omitempty"`
	Seed uint64    `json:"seed"`
}

// Setting is one config field's value in a cell.
type Setting struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.=+-]+`)

// name is data.model[.key=value...].seedN with anything but letters,
// digits and _.=+- turned into _.
func (c Cell) name() string {
	parts := []string{c.Data, c.Model}
	for _, v := range c.Vary {
		parts = append(parts, v.Key+"="+strings.Trim(string(v.Value), `"`))
	}
	parts = append(parts, "seed"+strconv.FormatUint(c.Seed, 10))
	for i := range parts {
		parts[i] = unsafeName.ReplaceAllString(parts[i], "_")
	}
	return strings.Join(parts, ".")
}

// Group is the cell's name without its seed: the cells averaged together.
func (c Cell) Group() string {
	parts := []string{c.Data, c.Model}
	for _, v := range c.Vary {
		parts = append(parts, v.Key+"="+strings.Trim(string(v.Value), `"`))
	}
	return strings.Join(parts, " ")
}

// The files of a cell folder besides those of compbench train.
const (
	// CellFile records the cell (cell.json), written before its stages.
	CellFile = "cell.json"
	// ConfigPatch is the --config file given to compbench train.
	ConfigPatch = "sweep-config.json"
	// ResultFile is written last: a cell holding it is finished.
	ResultFile = "result.json"
	// ErrorFile holds a failed cell's error and the tail of its log.
	ErrorFile = "error.txt"
	// LogFile collects the stages' standard error.
	LogFile = "log.txt"
	// TestPreds and TestEval are the zero-shot predictions and scores;
	// FinetuneDir is the fine-tuned run, with its own TestPreds and TestEval.
	TestPreds   = "test.preds.jsonl"
	TestEval    = "test.eval.json"
	FinetuneDir = "ft"
	// DataDir holds generated data (Tasks axis).
	DataDir = "data"
)

// CellsDir is the folder of the cell folders under OUT.
const CellsDir = "cells"

// SpecFile is the resolved sweep file recorded under OUT.
const SpecFile = "sweep.json"

// Dir is the cell's folder under out.
func (c Cell) Dir(out string) string { return filepath.Join(out, CellsDir, c.Name) }

// Result is result.json: what the report reads besides metrics.jsonl.
type Result struct {
	Cell Cell `json:"cell"`
	// Steps, TrainLoss, BestStep and DevEM are compbench train's result
	// (DevEM -1 without a dev set).
	Steps     int     `json:"steps"`
	TrainLoss float64 `json:"train_loss"`
	BestStep  int     `json:"best_step"`
	DevEM     float64 `json:"dev_em"`
	// TestEM is the zero-shot exact match on the test set; FewShotEM the
	// exact match after fine-tuning (nil without fine-tuning).
	TestEM    float64  `json:"test_em"`
	FewShotEM *float64 `json:"few_shot_em,omitempty"`
	// ByCategory is zero-shot exact match per case of a test set whose
	// records all carry a category (COGS's gen.tsv; eval --by category),
	// nil otherwise.
	ByCategory *eval.Breakdown `json:"by_category,omitempty"`
	// TestExec and FewShotExec are RobustFill's execution accuracy (nil
	// unless the sweep sets execute).
	TestExec    *float64 `json:"test_exec,omitempty"`
	FewShotExec *float64 `json:"few_shot_exec,omitempty"`
	// TrainSeconds is the wall time of the training stage, summed over
	// the invocations that ran it (a resumed cell's included).
	TrainSeconds float64 `json:"train_seconds"`
	// CompoundDivergence is the dataset's split.json value, when known.
	CompoundDivergence *float64 `json:"compound_divergence,omitempty"`
	// EasinessAUC is the ROC AUC of predicted easiness against zero-shot
	// correctness (nil unless the sweep sets easiness, or when every
	// prediction is right or every one wrong).
	EasinessAUC *float64 `json:"easiness_auc,omitempty"`
}

// State is a cell's state as its folder shows it.
type State string

// The states of a cell.
const (
	Pending  State = "pending"  // nothing written
	Started  State = "started"  // some stages done, not finished
	Failed   State = "failed"   // error.txt present, not finished
	Finished State = "finished" // result.json present
)

// StateOf reads a cell's state from its folder.
func StateOf(dir string) State {
	switch {
	case data.Exists(filepath.Join(dir, ResultFile)):
		return Finished
	case data.Exists(filepath.Join(dir, ErrorFile)):
		return Failed
	case data.Exists(filepath.Join(dir, CellFile)):
		return Started
	}
	return Pending
}

// ReadResult reads a finished cell's result.json.
func ReadResult(dir string) (*Result, error) {
	b, err := data.ReadFileLimit(filepath.Join(dir, ResultFile), data.ConfigFile)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
	}
	return &r, nil
}

// Validate refuses values no cell can produce, so that a hand-edited or
// foreign result.json cannot show as 700% in a report: rates and AUCs
// outside [0, 1] (dev_em may be -1, no dev set), negative counts, losses
// and times.
func (r *Result) Validate() error {
	rates := []struct {
		name string
		v    *float64
	}{{"test_em", &r.TestEM}, {"few_shot_em", r.FewShotEM}, {"test_exec", r.TestExec},
		{"few_shot_exec", r.FewShotExec}, {"compound_divergence", r.CompoundDivergence}, {"easiness_auc", r.EasinessAUC}}
	if r.DevEM != -1 {
		rates = append(rates, struct {
			name string
			v    *float64
		}{"dev_em", &r.DevEM})
	}
	for _, f := range rates {
		if f.v != nil && !(*f.v >= 0 && *f.v <= 1) {
			return fmt.Errorf("%s %v outside [0, 1]", f.name, *f.v)
		}
	}
	switch {
	case r.Steps < 0 || r.BestStep < 0:
		return fmt.Errorf("steps %d / best_step %d: want >= 0", r.Steps, r.BestStep)
	case !(r.TrainLoss >= 0) || !(r.TrainSeconds >= 0):
		return fmt.Errorf("train_loss %v / train_seconds %v: want >= 0", r.TrainLoss, r.TrainSeconds)
	}
	return nil
}

// TrainState is the part of a run's state.json the sweep reads: the step
// of its last checkpoint.
type TrainState struct {
	Step     int     `json:"step"`
	BestStep int     `json:"best_step"`
	BestEM   float64 `json:"best_em"`
	// EvalPending: a stop interrupted step Step's dev evaluation, which
	// train --resume runs first; the run is not finished.
	EvalPending bool `json:"eval_pending"`
}

// ReadTrainState reads a run folder's state.json; ok is false when the
// run has no checkpoint yet.
func ReadTrainState(runDir string) (TrainState, bool, error) {
	var st TrainState
	b, err := data.ReadFileLimit(filepath.Join(runDir, train.StateFile), data.ConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("%s: %w", filepath.Join(runDir, train.StateFile), err)
	}
	return st, true, nil
}

// The easiness files of a cell: predicted easiness of each test example
// (compbench easiness) and the zero-shot per-example judgements.
const (
	EasinessFile = "easiness.jsonl"
	ExamplesFile = "test.examples.jsonl"
)

// EasinessROC is the ROC curve of a cell's predicted easiness against the
// correctness of its zero-shot predictions; ok is false when the cell has
// no easiness, or its predictions are all right or all wrong (no curve).
func EasinessROC(dir string) (auc float64, roc []eval.ROCPoint, ok bool, err error) {
	easy, err := eval.ReadEasiness(filepath.Join(dir, EasinessFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, err
	}
	f, err := data.Open(filepath.Join(dir, ExamplesFile))
	if err != nil {
		return 0, nil, false, err
	}
	defer f.Close()
	var scores []float64
	var labels []bool
	dec := json.NewDecoder(f)
	for {
		var ex eval.Example
		if err := dec.Decode(&ex); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return 0, nil, false, fmt.Errorf("%s: %w", filepath.Join(dir, ExamplesFile), err)
		}
		e, found := easy[ex.ID]
		if !found {
			return 0, nil, false, fmt.Errorf("%s: no easiness for test example %q", filepath.Join(dir, EasinessFile), ex.ID)
		}
		scores, labels = append(scores, e), append(labels, ex.Correct)
	}
	auc, roc, err = eval.AUC(scores, labels)
	if err != nil { // one class only: the curve is undefined
		return 0, nil, false, nil
	}
	return auc, roc, true, nil
}
