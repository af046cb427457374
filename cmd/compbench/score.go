package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

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
	in := fs.String("in", "", "input records (JSONL)")
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
	fs.Float64Var(&fc.LR, "lr", fc.LR, fmt.Sprintf("fine-tuning learning rate (constant; %g with --from-scratch unless set)", scratchLR))
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
	if *folds < 0 {
		return usagef("score: --folds %d: want 0 (score with the model as is) or at least 2", *folds)
	}
	var sizeCfg gpt2.Config
	if *folds > 0 {
		fc.Folds = *folds
		if err := fc.Validate(); err != nil {
			return usagef("score: %v", err)
		}
		if *scratch {
			lrSet := false
			fs.Visit(func(f *flag.Flag) { lrSet = lrSet || f.Name == "lr" })
			if !lrSet {
				fc.LR = scratchLR
			}
			if *size != "tiny" && *size != "small" {
				return usagef("score: --size %q: want tiny or small", *size)
			}
			sizeCfg, _ = gpt2.Size(*size)
		}
	} else if *scratch {
		return usagef("score: --from-scratch needs --folds (an untrained model gives meaningless scores)")
	}
	if err := checkNotInput(files("--out", *out), join(files("--in", *in), lmPaths("--lm", *lmDir))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	blas.Use()
	recs, err := data.ReadRecords(*in)
	if err != nil {
		return err
	}
	if err := requireQuery(recs, sc.Field); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	tok, err := lm.LoadTokenizer(*lmDir)
	if err != nil {
		return err
	}
	var base *gpt2.Model
	nPos := sizeCfg.NPositions
	if !*scratch {
		if base, err = gpt2.Load(*lmDir); err != nil {
			return err
		}
		nPos = base.Cfg.NPositions
		if base.Cfg.VocabSize != tok.VocabSize() {
			return fmt.Errorf("%s: the tokenizer has %d tokens but config.json says vocab_size %d", *lmDir, tok.VocabSize(), base.Cfg.VocabSize)
		}
	}
	if !sc.Truncate {
		if err := checkContext(tok, recs, sc.Field, nPos); err != nil {
			return fmt.Errorf("%s: %w", *in, err)
		}
	}
	ex, truncated, err := lm.EncodeRecords(tok, recs, sc, nPos)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	if truncated > 0 {
		fmt.Fprintf(stderr, "score: truncated %d of %d records to %d tokens\n", truncated, len(recs), nPos)
	}
	if *scratch {
		// A fresh model emits only the data's tokens (see lm.CompactVocab).
		v := lm.NewCompactVocab(ex, tok.EOS())
		if ex, err = v.Compact(ex); err != nil {
			return err
		}
		sizeCfg.VocabSize = v.Size()
		fmt.Fprintf(stderr, "score: from-scratch model over the %d token ids of the data (of %d), learning rate %g\n", v.Size(), tok.VocabSize(), fc.LR)
	}
	be, release, err := dev.open()
	if err != nil {
		return err
	}
	defer release()
	fmt.Fprintf(stderr, "score: engine executor on %s\n", be.Name())
	var scores []lm.Score
	start := time.Now()
	if *folds > 0 {
		newModel := func() (*gpt2.Trainer, error) {
			var m *gpt2.Model
			var err error
			if *scratch {
				m, err = gpt2.New(sizeCfg, fc.Seed)
			} else {
				m, err = gpt2.Load(*lmDir)
			}
			if err != nil {
				return nil, err
			}
			// Weights, gradients and AdamW moments stay on the device for
			// the fold; only the best step's weights come back.
			tr, err := gpt2.NewTrainer(m, be, gpt2.AdamW())
			if err != nil {
				return nil, fmt.Errorf("score: %s: %w", be.Name(), err)
			}
			return tr, nil
		}
		scores, err = lm.ScoreFolds(ctx, newModel, ex, sc, fc, stderr)
	} else {
		ge, gerr := gpt2.NewEngine(base, be)
		if gerr != nil {
			return fmt.Errorf("score: %s: %w", be.Name(), gerr)
		}
		defer ge.Close()
		bar := progress.New(stderr, "score on "+be.Name(), int64(len(ex)))
		scores, err = lm.ScoreAll(ctx, ge, ex, sc, bar)
		bar.Finish()
	}
	if err != nil {
		return err
	}
	el := time.Since(start)
	set := data.NewOutputSet(*force)
	w, err := set.Create(*out)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for i := range scores {
		if err := enc.Encode(&scores[i]); err != nil {
			set.Abort()
			return fmt.Errorf("write %s: %w", *out, err)
		}
	}
	if err := set.Commit(); err != nil {
		return err
	}
	processed := 0 // prompt and query tokens run through the model, once per record
	for i := range ex {
		processed += len(ex[i].Ids)
	}
	what := "scoring"
	if *folds > 0 {
		what = "fine-tuning and scoring"
	}
	fmt.Fprintf(stderr, "score: wrote %d scores to %s; %s took %s (%.0f tokens/s)\n",
		len(scores), *out, what, el.Round(time.Millisecond), float64(processed)/el.Seconds())
	return nil
}

// scratchLR is the default learning rate of --from-scratch. Godbole & Jia's
// 2e-5 (App. A.2) is for fine-tuning a pretrained GPT-2; a freshly
// initialised model trains at the rates of small Transformers (on 3,000 SCAN
// commands, 1e-3 takes the tiny model's validation perplexity from 22 to
// about 4 in 500 steps).
const scratchLR = 1e-3

// requireQuery fails on the first record whose scored field is missing,
// not a string, or blank: its score would be that of <|endoftext|> alone.
func requireQuery(recs []data.Record, field string) error {
	for i := range recs {
		q, err := lm.Field(&recs[i], field)
		if err != nil {
			return err
		}
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("record %d (id %q) has no %q", i+1, recs[i].ID, field)
		}
	}
	return nil
}

// checkContext fails on the first record whose query alone is surely
// longer than the model's context, before any record is tokenized:
// tokenizing megabytes of text only to refuse it looks like a hang.
func checkContext(tok *lm.Tokenizer, recs []data.Record, field string, nPos int) error {
	for i := range recs {
		q, err := lm.Field(&recs[i], field)
		if err != nil {
			return err
		}
		if n := tok.MinTokens(q) + 1; n > nPos { // + <|endoftext|>
			return fmt.Errorf("record %q: at least %d tokens (%d bytes) exceed the model's n_positions %d (use --truncate to keep the last %d)",
				recs[i].ID, n, len(q), nPos, nPos)
		}
	}
	return nil
}
