package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/progress"
)

// TestExperiment: each model is trained, decoded zero-shot, fine-tuned and
// decoded again; the rows carry what the run folders hold, and the exact
// match is that of the predictions written.
func TestExperiment(t *testing.T) {
	for _, c := range []struct {
		name    string
		ftSteps int
	}{{"few-shot", 3}, {"zero-shot only", 0}} {
		t.Run(c.name, func(t *testing.T) {
			a, b := tinyConfig("transformer"), tinyConfig("relative")
			a.Steps, b.Steps = 60, 60
			dir := t.TempDir()
			e := Experiment{Configs: []Config{a, b}, Dir: dir, Train: tinyData(), Dev: tinyData(), Test: tinyData(),
				Finetune: tinyData()[:2], FinetuneSteps: c.ftSteps, FinetuneLR: 1e-3, Beam: 1, Progress: progress.Discard}
			rows, err := e.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 2 || rows[0].Variant != "transformer" || rows[1].Variant != "relative" {
				t.Fatalf("rows %+v", rows)
			}
			for _, r := range rows {
				if r.Steps != 60 || r.DevEM < 0 || r.DevEM > 1 || r.ZeroShot < 0 || r.ZeroShot > 1 {
					t.Errorf("row %+v", r)
				}
				preds, err := os.ReadFile(filepath.Join(dir, r.Variant, "test.preds.jsonl"))
				if err != nil || strings.Count(string(preds), "\n") != len(tinyData()) {
					t.Errorf("%s: predictions %q, %v", r.Variant, preds, err)
				}
				_, err = os.Stat(filepath.Join(dir, r.Variant+"-ft", "test.preds.jsonl"))
				if few := c.ftSteps > 0; few != (err == nil) || few != (r.FewShot >= 0) {
					t.Errorf("%s: fine-tuned predictions: %v, few-shot %v", r.Variant, err, r.FewShot)
				}
			}
			table := ExperimentTable(rows)
			if strings.Count(table, "\n") != 4 || !strings.Contains(table, "| relative | 60 |") {
				t.Errorf("table:\n%s", table)
			}
			// The runs exist: a second experiment without Force refuses.
			if _, err := e.Run(context.Background()); err == nil {
				t.Error("an experiment over existing runs without Force succeeded")
			}
		})
	}
}
