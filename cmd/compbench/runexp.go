package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"compbench/blas"
	"compbench/data"
	"compbench/progress"
	"compbench/train"
)

// checkSplitDir refuses the flags that generate data beside --data, a
// --data folder that is not a split's (checked before anything is
// written) and an --out that is that folder, whose run folders would mix
// with the data.
func checkSplitDir(fs *flag.FlagSet, dir, out string) error {
	for _, n := range []string{"task", "train-size", "dev-size", "test-size"} {
		if isSet(fs, n) {
			return usagef("run: --%s generates data; --data %s reads it: give one of them", n, dir)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("run: --data %s: not a folder (want a split folder: train.jsonl, dev.jsonl, test.jsonl, as compbench split writes)", dir)
	}
	for _, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl"} {
		if !data.Exists(filepath.Join(dir, f)) {
			return fmt.Errorf("run: --data %s has no %s (a split folder holds train.jsonl, dev.jsonl and test.jsonl)", dir, f)
		}
	}
	if a, b := filepath.Clean(dir), filepath.Clean(out); a == b {
		return usagef("run: --out %s is the --data folder: give the experiment a folder of its own", out)
	}
	return nil
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "run (--task length | --data SPLIT) --models transformer,relative --out DIR [flags]", `
One experiment end to end: generate a SCAN benchmark for --task (or read the
split folder --data: its train.jsonl, dev.jsonl, test.jsonl and, when present,
finetune.jsonl), train each model, predict the test set (zero-shot), fine-tune
on the few-shot set and predict again, then print exact match per model.
Defaults are a small CPU budget
(`+train.RunDefaults()+`),
not the "config default" values listed below; --preset NAME starts each model
from train's preset instead (cpu-small learns SCAN's random split in minutes),
and the model and optimisation flags of "compbench train" override either
(--layers 3 --dim 256 --mlp 512 for the paper's size). DIR gets data/ (with
--task), one run folder per model (and MODEL-ft), predictions and results.md.
--device runs training, fine-tuning and decoding of every model on that device.`, stderr)
	var tf trainFlags
	tf.register(fs)
	tf.registerTrain(fs)
	task := fs.String("task", "length", "SCAN generalization `TASK` (see compbench gen --help)")
	split := fs.String("data", "", "read the split folder `SPLIT` (train.jsonl, dev.jsonl, test.jsonl, finetune.jsonl if present) instead of generating --task")
	modelList := fs.String("models", "transformer", "comma-separated `LIST` of models")
	out := fs.String("out", "", "experiment `DIR` (required)")
	nTrain := fs.Int("train-size", 1000, "training examples generated")
	nDev := fs.Int("dev-size", 100, "dev examples generated")
	nTest := fs.Int("test-size", 100, "test examples generated")
	ftSteps := fs.Int("finetune-steps", 30, "few-shot fine-tuning steps (0: skip)")
	ftLR := fs.Float64("finetune-lr", 1e-4, "fine-tuning learning rate")
	beam := fs.Int("beam", 1, "beam size for prediction")
	force := fs.Bool("force", false, "replace existing results in DIR")
	devName := deviceFlag(fs)
	cacheMB := graphCacheFlag(fs)
	if err := checkRenamed("run", args, []renamedFlag{{"valid-size", "dev-size", "generated into dev.jsonl"}}); err != nil {
		return err
	}
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("run: --out is required")
	}
	if *beam < 1 || *ftSteps < 0 {
		return usagef("run: --beam must be >= 1 and --finetune-steps >= 0")
	}
	if *split != "" {
		if err := checkSplitDir(fs, *split, *out); err != nil {
			return err
		}
	}
	if isSet(fs, "model") {
		return usagef("run: use --models, not --model")
	}
	// Checked before anything is written: a refused device leaves no DIR.
	dv, err := parseDevice(*devName)
	if err != nil {
		return err
	}
	if err := setGraphCache(*cacheMB); err != nil {
		return err
	}
	cfgs, err := runConfigs(fs, &tf, *modelList)
	if err != nil {
		return err
	}
	blas.Use()
	// One backend for every stage, so the whole experiment runs on it.
	be, release, err := dv.open()
	if err != nil {
		return err
	}
	defer release()
	dataDir, about := *split, "split "+*split
	if *split == "" {
		dataDir, about = filepath.Join(*out, "data"), "SCAN task "+*task
		if err := runGenerate(ctx, *task, dataDir, []int{*nTrain, *nDev, *nTest}, tf.seed, *force, stderr); err != nil {
			return err
		}
	}
	exp := &train.Experiment{Configs: cfgs, Dir: *out, FinetuneSteps: *ftSteps, FinetuneLR: *ftLR, Beam: *beam, Force: *force,
		Backend: be, Progress: progress.To(stderr)}
	return runExperiment(ctx, exp, dataDir, *split, about, tf.seed, stdout, stderr)
}

// runGenerate generates the SCAN task's data into dir, as gen does:
// counts are the train, dev and test sizes.
func runGenerate(ctx context.Context, task, dir string, counts []int, seed uint64, force bool, stderr io.Writer) error {
	args := []string{"scan", "--task", task, "--out", dir, "--train-size", strconv.Itoa(counts[0]),
		"--dev-size", strconv.Itoa(counts[1]), "--test-size", strconv.Itoa(counts[2]), "--seed", strconv.FormatUint(seed, 10)}
	if force {
		args = append(args, "--force")
	}
	fmt.Fprintf(stderr, "generating SCAN %s data in %s\n", task, dir)
	if err := runGen(ctx, args, io.Discard, stderr); err != nil {
		return fmt.Errorf("run: generate: %w", err)
	}
	return nil
}

// runConfigs are the configs of the models in list, the flags applied;
// weights too large for the machine are refused before DIR is made (the
// data's vocabulary and lengths are checked once it is read).
func runConfigs(fs *flag.FlagSet, tf *trainFlags, list string) ([]train.Config, error) {
	names := strings.Split(list, ",")
	cfgs := make([]train.Config, len(names))
	for i, n := range names {
		var err error
		if cfgs[i], err = train.RunModelConfig(tf.preset, strings.TrimSpace(n)); err != nil {
			return nil, usagef("run: %v", err)
		}
		if err := tf.apply(fs, &cfgs[i]); err != nil {
			return nil, err
		}
		if err := checkMemory("run", memParts(train.WeightsMemory(cfgs[i].Model, 0, 0, true))...); err != nil {
			return nil, err
		}
	}
	return cfgs, nil
}

// runExperiment reads the split in dataDir (split: given by --data),
// checks that each model's training fits in memory, runs the experiment
// and writes and prints its table.
func runExperiment(ctx context.Context, exp *train.Experiment, dataDir, split, about string, seed uint64, stdout, stderr io.Writer) error {
	if err := exp.ReadSplit(dataDir); err != nil {
		return err
	}
	var err error
	switch ftPath := filepath.Join(dataDir, "finetune.jsonl"); {
	case exp.FinetuneSteps == 0:
	case split != "" && !data.Exists(ftPath):
		// A split of a pool has no few-shot set: zero-shot only.
		fmt.Fprintf(stderr, "run: %s has no finetune.jsonl: zero-shot only\n", split)
		exp.FinetuneSteps = 0
	default:
		if exp.Finetune, err = data.ReadRecords(ftPath); err != nil {
			return err
		}
	}
	trainPath, devPath := filepath.Join(dataDir, "train.jsonl"), filepath.Join(dataDir, "dev.jsonl")
	for i := range exp.Configs {
		if err := checkTrainData(exp.Configs[i], trainPath, exp.Train, devPath, exp.Dev); err != nil {
			return err
		}
		exp.Configs[i].Seed = seed
	}
	if exp.Provenance, err = provenanceOf([2]string{"train", trainPath}, [2]string{"dev", devPath}); err != nil {
		return err
	}
	rows, err := exp.Run(ctx)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	table := train.ExperimentTable(rows)
	if err := exp.WriteResults(about, seed, table); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, table)
	return err
}
