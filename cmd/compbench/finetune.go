package main

import (
	"context"
	"fmt"
	"io"

	"compbench/blas"
	"compbench/data"
	"compbench/models"
	"compbench/progress"
	"compbench/train"
)

func runFinetune(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("finetune", "finetune --run RUN --data finetune.jsonl --steps 30 --lr 1e-4 --out RUN2", `
Few-shot fine-tuning (Shi et al. §5): start from RUN's best weights and train on
all of --data as one batch (the paper: 20 training- and 20 test-distribution
examples) with a constant learning rate. Writes a new run; RUN is unchanged.`, stderr)
	runDir := fs.String("run", "", "run `DIR` to start from (required)")
	dataPath := fs.String("data", "", "fine-tuning records `FILE` (JSONL, .tsv or SCAN .txt; required)")
	out := fs.String("out", "", "new run `DIR` (required)")
	steps := fs.Int("steps", 30, "updates")
	lr := fs.Float64("lr", 1e-4, "constant learning rate")
	force := fs.Bool("force", false, "replace an existing run in --out")
	devName := deviceFlag(fs)
	cacheMB := graphCacheFlag(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" || *dataPath == "" || *out == "" {
		return usagef("finetune: --run, --data and --out are required")
	}
	if *steps < 1 || !(*lr > 0) {
		return usagef("finetune: --steps must be >= 1 and --lr > 0")
	}
	if err := checkNotInput(runPaths("--out", *out), join(runPaths("--run", *runDir), files("--data", *dataPath))); err != nil {
		return err
	}
	dev, err := parseDevice(*devName)
	if err != nil {
		return err
	}
	if err := setGraphCache(*cacheMB); err != nil {
		return err
	}
	blas.Use()
	lock, err := train.LockRun(*out)
	if err != nil {
		return fmt.Errorf("finetune: %w", err)
	}
	defer lock.Unlock()
	base, err := train.OpenRun(*runDir, true)
	if err != nil {
		return err
	}
	be, release, err := dev.open()
	if err != nil {
		return err
	}
	defer release()
	recs, err := data.ReadRecords(*dataPath)
	if err != nil {
		return err
	}
	if err := data.RequireText(recs, true); err != nil {
		return fmt.Errorf("%s: %w", *dataPath, err)
	}
	// Every record is in the one batch, padded to the longest.
	cfg, v := base.Config.Model, base.Vocab
	src, tgt := models.DataLengths(cfg, recs)
	parts := memParts(train.WeightsMemory(cfg, len(v.Source), len(v.Target), true), train.ActivationsMemory(cfg, len(recs), src, tgt, len(v.Target)))
	parts[1].settings = "the records in --data"
	if err := checkMemory("finetune", parts...); err != nil {
		return err
	}
	prov, err := provenanceOf([2]string{"run-weights", base.WeightsPath()}, [2]string{"data", *dataPath})
	if err != nil {
		return err
	}
	res, err := train.Finetune(ctx, base, recs, train.FinetuneOptions{Steps: *steps, LR: *lr, Out: *out, Force: *force, Progress: progress.To(stderr), Backend: be, Provenance: prov, Lock: lock})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %s: fine-tuned %s for %d steps on %d examples (%.0f tokens/s), final loss %.4f\n", *out, *runDir, res.Steps, len(recs), res.TokensPerSecond(), res.TrainLoss)
	return nil
}
