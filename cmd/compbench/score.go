package main

import (
	"context"
	"fmt"
	"io"

	"compbench/blas"
	"compbench/data"
	"compbench/lm"
	"compbench/models/gpt2"
	"compbench/progress"
)

func runScore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("score", "score --lm DIR --in data.jsonl --out scores.jsonl [flags]", `
Score every record with a GPT-2 language model for Likelihood Splits
(Godbole & Jia 2023): score = total log-probability of the query tokens and
the end-of-text token, given the prompt prefix. DIR is a Hugging Face GPT-2
folder (config.json, model.safetensors and vocab.json+merges.txt,
encoder.json+vocab.bpe or tokenizer.json). With --folds K the records are
split into K folds and each fold is scored by the model fine-tuned on the
others (AdamW, constant learning rate), from DIR or, with --from-scratch, from
a freshly initialised GPT-2 of --size using DIR's tokenizer only; a
from-scratch model's output layer covers only the token ids that occur in the
data (and <|endoftext|>).
Output lines: {"id","score","tokens","ppl"}.`, stderr)
	lmDir := fs.String("lm", "", "GPT-2 folder (weights and tokenizer)")
	in := fs.String("in", "", "input records (JSONL, .tsv or SCAN .txt)")
	out := fs.String("out", "", "output scores (JSONL)")
	sc := lm.DefaultScoreConfig()
	fs.StringVar(&sc.Field, "field", sc.Field, "record field holding the query: input, output or another string field")
	fs.StringVar(&sc.Template, "prompt", sc.Template, "prompt template ending in {query}; other {field}s are filled from the record")
	fs.IntVar(&sc.Batch, "batch", sc.Batch, "examples per forward pass")
	fs.BoolVar(&sc.PerToken, "per-token", false, "also write each scored token's log-probability")
	fs.BoolVar(&sc.Truncate, "truncate", false, "keep the last n_positions tokens of longer examples instead of failing")
	fc := lm.DefaultFoldConfig()
	folds := fs.Int("folds", 0, "k-fold fine-tuning with this many folds (0: score with the model as is)")
	fs.IntVar(&fc.MaxSteps, "steps", fc.MaxSteps, "fine-tuning steps per fold")
	fc.LR = 0 // the Job's default for pretrained or fresh weights
	fs.Float64Var(&fc.LR, "lr", 0, fmt.Sprintf("fine-tuning learning rate, constant (0: %g, or %g with --from-scratch)", lm.PretrainedLR, lm.ScratchLR))
	fs.IntVar(&fc.Batch, "train-batch", fc.Batch, "fine-tuning examples per step")
	fs.IntVar(&fc.EvalEvery, "eval-every", fc.EvalEvery, "steps between validation perplexity checks")
	fs.Uint64Var(&fc.Seed, "seed", fc.Seed, "seed for folds, validation part, batch order and --from-scratch weights")
	scratch := fs.Bool("from-scratch", false, "with --folds: start each fold from fresh weights of --size instead of DIR's weights")
	size := fs.String("size", "tiny", "model size for --from-scratch: tiny or small")
	force := fs.Bool("force", false, "replace an existing --out")
	devName := deviceFlag(fs)
	if err := checkRenamed("score", args, []renamedFlag{{"max-steps", "steps", "optimizer steps are --steps in every command"}}); err != nil {
		return err
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("score: unexpected argument %q", pos[0])
	}
	if *lmDir == "" || *in == "" || *out == "" {
		return usagef("score: --lm, --in and --out are required")
	}
	if err := sc.Validate(); err != nil {
		return usagef("score: %v", err)
	}
	dev, err := parseDevice(*devName)
	if err != nil {
		return err
	}
	sizeCfg, err := scoreFolds(&fc, *folds, *scratch, *size)
	if err != nil {
		return err
	}
	if err := checkNotInput(files("--out", *out), join(files("--in", *in), lmPaths("--lm", *lmDir))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	blas.Use()
	job := lm.Job{Dir: *lmDir, In: *in, Score: sc, Folds: fc, Scratch: *scratch, Size: sizeCfg, Progress: progress.To(stderr)}
	return scoreRecords(ctx, job, dev, *out, *force, stderr)
}

// scoreRecords reads job's records, scores them on the device and writes
// the scores to out.
func scoreRecords(ctx context.Context, job lm.Job, dev device, out string, force bool, stderr io.Writer) error {
	var err error
	if job.Records, err = data.ReadRecords(job.In); err != nil {
		return err
	}
	be, release, err := dev.open()
	if err != nil {
		return err
	}
	defer release()
	job.Backend = be
	res, err := job.Run(ctx)
	if err != nil {
		return err
	}
	if err := res.Write(out, force); err != nil {
		return err
	}
	what := "scoring"
	if job.Folds.Folds > 0 {
		what = "fine-tuning and scoring"
	}
	fmt.Fprint(stderr, res.Note(out, what))
	return nil
}

// scoreFolds checks the k-fold settings, sets fc's folds and default
// learning rate, and returns the --from-scratch model's size.
func scoreFolds(fc *lm.FoldConfig, folds int, scratch bool, size string) (gpt2.Config, error) {
	var sizeCfg gpt2.Config
	if folds < 0 {
		return sizeCfg, usagef("score: --folds %d: want 0 (score with the model as is) or at least 2", folds)
	}
	fc.Folds = folds
	if folds == 0 {
		if scratch {
			return sizeCfg, usagef("score: --from-scratch needs --folds (an untrained model gives meaningless scores)")
		}
		return sizeCfg, nil
	}
	*fc = fc.WithDefaultLR(scratch)
	if err := fc.Validate(); err != nil {
		return sizeCfg, usagef("score: %v", err)
	}
	if scratch {
		if size != "tiny" && size != "small" {
			return sizeCfg, usagef("score: --size %q: want tiny or small", size)
		}
		sizeCfg, _ = gpt2.Size(size)
	}
	return sizeCfg, nil
}
