package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/data/split"
	"compbench/eval"
	"compbench/train"
)

// result gathers the finished stages' outputs into result.json.
func (r *Runner) result(c Cell, dir string, f cellFiles) (*Result, error) {
	res := &Result{Cell: c, DevEM: -1}
	st, _, err := ReadTrainState(dir)
	if err != nil {
		return nil, err
	}
	res.Steps, res.BestStep = st.Step, st.BestStep
	if f.dev != "" {
		res.DevEM = st.BestEM
	}
	res.TrainLoss = lastLoss(filepath.Join(dir, train.MetricsFile))
	res.TrainSeconds = readSeconds(filepath.Join(dir, trainSecondsFile))
	sum, err := readSummary(filepath.Join(dir, TestEval))
	if err != nil {
		return nil, err
	}
	res.TestEM, res.ByCategory = sum.Accuracy, sum.ByCategory
	if r.Spec.Execute {
		v, err := readAccuracy(filepath.Join(dir, "test.exec.json"))
		if err != nil {
			return nil, err
		}
		res.TestExec = &v
	}
	if err := r.fewShot(res, filepath.Join(dir, FinetuneDir)); err != nil {
		return nil, err
	}
	if auc, _, ok, err := EasinessROC(dir); err != nil {
		return nil, err
	} else if ok {
		res.EasinessAUC = &auc
	}
	if f.split != "" {
		if res.CompoundDivergence, err = compoundDivergence(f.split); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// fewShot sets the fine-tuned run's scores, when ftDir has them.
func (r *Runner) fewShot(res *Result, ftDir string) error {
	if !data.Exists(filepath.Join(ftDir, TestEval)) {
		return nil
	}
	v, err := readAccuracy(filepath.Join(ftDir, TestEval))
	if err != nil {
		return err
	}
	res.FewShotEM = &v
	if r.Spec.Execute {
		v, err := readAccuracy(filepath.Join(ftDir, "test.exec.json"))
		if err != nil {
			return err
		}
		res.FewShotExec = &v
	}
	return nil
}

// compoundDivergence is the split.json's D_C (nil when it has none).
func compoundDivergence(path string) (*float64, error) {
	b, err := data.ReadFileLimit(path, data.SplitFile)
	if err != nil {
		return nil, err
	}
	var sf struct {
		Stats split.Stats `json:"stats"`
	}
	if err := json.Unmarshal(b, &sf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sf.Stats.CompoundDivergence, nil
}

func readAccuracy(path string) (float64, error) {
	s, err := readSummary(path)
	if err != nil {
		return 0, err
	}
	return s.Accuracy, nil
}

// readSummary reads compbench eval --json's summary.
func readSummary(path string) (*eval.Summary, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, err
	}
	var s eval.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// categorized reports whether every record of the test file names its
// category (and there is at least one).
func categorized(path string) (bool, error) {
	recs, err := data.ReadRecords(path)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if r.Category == "" {
			return false, nil
		}
	}
	return len(recs) > 0, nil
}

// lastLoss is the training loss of metrics.jsonl's last training line.
func lastLoss(path string) float64 {
	b, _ := data.ReadFileLimit(path, data.MetricsFile)
	loss := 0.0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var m struct {
			Loss *float64 `json:"loss"`
		}
		if json.Unmarshal(line, &m) == nil && m.Loss != nil {
			loss = *m.Loss
		}
	}
	return loss
}

func readSeconds(path string) float64 {
	b, _ := data.ReadFileLimit(path, data.ConfigFile)
	v, _ := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	return v
}
