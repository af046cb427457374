package main

import (
	"context"
	"fmt"
	"io"

	"compbench/data/tasks"
)

// validateGen checks gen's counts and output folder.
func validateGen(c tasks.Config) error {
	for _, f := range []struct {
		name string
		n    int
		min  int
	}{{"train-size", c.Train, 1}, {"dev-size", c.Dev, 0}, {"test-size", c.Test, 1}, {"finetune-size", c.Finetune, 0}} {
		if f.n < f.min {
			return fmt.Errorf("--%s must be at least %d, got %d", f.name, f.min, f.n)
		}
		if f.n > tasks.MaxExamples {
			return fmt.Errorf("--%s %d: at most %d examples", f.name, f.n, tasks.MaxExamples)
		}
	}
	if c.Out == "" {
		return fmt.Errorf("--out is required")
	}
	return nil
}

// runGen implements "compbench gen".
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// scfg has flags of its own; it is dispatched before gen's flags parse.
	if len(args) > 0 && args[0] == "scfg" {
		return runGenSCFG(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "scan-original" {
		return runGenSCANOriginal(ctx, args[1:], stdout, stderr)
	}
	c := tasks.DefaultConfig()
	fs := newFlags("gen", "gen scan|robustfill [flags] --out DIR   (or: gen scfg --help, gen scan-original --help)", `
Generate a benchmark of Shi et al.: SCAN commands or RobustFill programs for
one compositional-generalization task. Writes DIR/train.jsonl and
DIR/dev.jsonl (training distribution), DIR/test.jsonl (test distribution)
and DIR/finetune.jsonl (alternating training and test distribution), all or
nothing. The same seed gives the same bytes.
Tasks: `+names(tasks.All, ", ")+`.`, stderr)
	task := fs.String("task", string(c.Task), "generalization task")
	fs.IntVar(&c.Train, "train-size", c.Train, "training examples (> 0)")
	fs.IntVar(&c.Dev, "dev-size", c.Dev, "dev examples, training distribution (>= 0)")
	fs.IntVar(&c.Test, "test-size", c.Test, "test examples, test distribution (> 0)")
	fs.IntVar(&c.Finetune, "finetune-size", c.Finetune, "few-shot fine-tuning examples, alternating distributions (>= 0)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed")
	fs.StringVar(&c.Out, "out", c.Out, "output folder (required)")
	fs.BoolVar(&c.Force, "force", c.Force, "replace existing files in the output folder")
	if err := checkRenamed("gen", args, genRenamed); err != nil {
		return err
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("gen: want one domain (scan, robustfill or scfg), got %d arguments", len(pos))
	}
	c.Domain = pos[0]
	if c.Task, err = tasks.Parse(*task); err != nil {
		return usagef("gen: %v", err)
	}
	if err := validateGen(c); err != nil {
		return usagef("gen: %v", err)
	}
	var s tasks.Sampler
	switch c.Domain {
	case "scan":
		s, err = tasks.NewSCAN(c.Task)
	case "robustfill":
		s, err = tasks.NewRobustFill(c.Task)
	case "scfg":
		// Another generator with its own flags, dispatched above.
		return usagef("gen: put the domain first for scfg: compbench gen scfg --grammar FILE ...")
	default:
		return usagef("gen: unknown domain %q (want scan, robustfill or scfg)", c.Domain)
	}
	if err != nil {
		return fmt.Errorf("gen %s: %w", c.Domain, err)
	}
	stats, err := tasks.Generate(ctx, c, s, stderr)
	if err != nil {
		return err
	}
	tasks.PrintSummary(stdout, c, stats)
	return nil
}

// genRenamed are gen's old count flags: --train and --test name files in
// train, predict and split, so counts are --X-size everywhere (as in run).
var genRenamed = []renamedFlag{
	{"train", "train-size", "a count; --train names a file elsewhere"},
	{"valid", "dev-size", "a count, written to dev.jsonl"},
	{"test", "test-size", "a count; --test names a file elsewhere"},
	{"finetune", "finetune-size", "a count"},
}
