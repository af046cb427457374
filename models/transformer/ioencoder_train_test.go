package transformer_test

import (
	"context"
	"fmt"
	"testing"

	"compbench/data"
	"compbench/data/robustfill"
	"compbench/models"
	"compbench/progress"
	"compbench/train"
)

// TestIODoubleOverfit trains a tiny double I/O model on a handful of
// sampled RobustFill tasks to 100% exact match, then checks the checkpoint
// round trip (the reopened run evaluates to the same loss), greedy and beam
// prediction from the checkpoint, and fine-tuning from it.
func TestIODoubleOverfit(t *testing.T) {
	rng := data.NewRand(11)
	s, err := robustfill.NewSampler(robustfill.Config{NumExamples: 3, MaxInputLen: 8, MaxInputPieces: 3, MaxRepeat: 2, MaxTries: 100})
	if err != nil {
		t.Fatal(err)
	}
	var recs []data.Record
	for i := range 8 {
		task, err := s.Sample(rng, robustfill.Spec{Pools: []robustfill.Pool{robustfill.PoolNoCompose}})
		if err != nil {
			t.Fatal(err)
		}
		r := task.Record()
		r.ID = fmt.Sprintf("rf%d", i)
		recs = append(recs, r)
	}
	cfg := train.DefaultConfig()
	if err := cfg.Model.ApplyVariant("relative-sep"); err != nil {
		t.Fatal(err)
	}
	cfg.Model.Layers, cfg.Model.Heads, cfg.Model.Dim, cfg.Model.MLPDim, cfg.Model.Dropout = 1, 2, 32, 64, 0
	cfg.Model.IOEncoder = models.IODouble
	cfg.Model.MaxSrcLen, cfg.Model.MaxTgtLen = 256, 32
	cfg.Steps, cfg.Batch, cfg.LR, cfg.Warmup, cfg.EvalEvery, cfg.EvalLimit = 250, 8, 3e-3, 0, 0, 0
	ctx := context.Background()
	dir := t.TempDir()
	res, err := train.Train(ctx, cfg, train.Options{Dir: dir, Train: recs, Dev: recs, Progress: progress.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if res.DevEM != 1 {
		t.Fatalf("exact match %.3f after %d steps (train loss %.4f), want 1", res.DevEM, res.Steps, res.TrainLoss)
	}

	run, err := train.OpenRun(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	release, err := run.UseBackend(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !run.Config.Model.DoubleIO() {
		t.Fatal("the reopened run is not double I/O")
	}
	ex, _, err := models.Encode(run.Vocab, recs, models.EncodeOptions{Separators: true, MaxSrc: 256, MaxTgt: 32})
	if err != nil {
		t.Fatal(err)
	}
	loss, em, err := train.Evaluate(ctx, run.Model, run.Vocab, recs, ex, &run.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	if loss != res.DevLoss || em != 1 {
		t.Errorf("reopened checkpoint: loss %v, exact match %v; trained model %v, 1", loss, em, res.DevLoss)
	}
	for _, beam := range []int{1, 3} {
		preds, _, err := train.Predict(ctx, run, recs, train.DecodeOptions{Beam: beam, Alpha: 0.6, Batch: 3}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range preds {
			if p.Text != recs[i].Output {
				t.Errorf("beam %d, %s: predicted %q, want %q", beam, p.ID, p.Text, recs[i].Output)
			}
		}
	}

	ft := t.TempDir()
	if _, err := train.Finetune(ctx, run, recs[:4], train.FinetuneOptions{Steps: 3, LR: 1e-4, Out: ft, Force: true, Progress: progress.Discard}); err != nil {
		t.Fatal(err)
	}
	if r2, err := train.OpenRun(ft, false); err != nil || !r2.Config.Model.DoubleIO() {
		t.Errorf("fine-tuned run: %v", err)
	}
}
