package lm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"compbench/data"
	"compbench/engine"
	"compbench/models/gpt2"
	"compbench/progress"
)

// ScratchLR is the learning rate of a from-scratch Job whose FoldConfig
// leaves it 0. Godbole & Jia's 2e-5 (App. A.2) is for fine-tuning a
// pretrained GPT-2; a freshly initialised model trains at the rates of
// small Transformers (on 3,000 SCAN commands, 1e-3 takes the tiny model's
// validation perplexity from 22 to about 4 in 500 steps).
const ScratchLR = 1e-3

// PretrainedLR is Godbole & Jia's fine-tuning learning rate (App. A.2),
// the LR of a Job on pretrained weights whose FoldConfig leaves it 0.
const PretrainedLR = 2e-5

// WithDefaultLR returns c with a learning rate of 0 replaced by the
// default for fresh weights (scratch: ScratchLR) or pretrained ones
// (PretrainedLR).
func (c FoldConfig) WithDefaultLR(scratch bool) FoldConfig {
	if c.LR == 0 {
		c.LR = PretrainedLR
		if scratch {
			c.LR = ScratchLR
		}
	}
	return c
}

// Job is one scoring run (compbench score): every record scored by the
// GPT-2 in Dir, or with Folds.Folds > 0 by Godbole & Jia's k-fold loop
// (§3.1), each fold scored by a model fine-tuned on the others.
type Job struct {
	// Dir is a Hugging Face GPT-2 folder: the tokenizer, and the weights
	// unless Scratch.
	Dir string
	// Records are scored in order; In names their file in messages.
	Records []data.Record
	In      string
	// Score says what to score (ScoreConfig.Validate holds).
	Score ScoreConfig
	// Folds: k-fold fine-tuning when Folds.Folds > 0 (LR 0: ScratchLR or
	// PretrainedLR); Folds.Folds 0 scores with the model as is.
	Folds FoldConfig
	// Scratch starts each fold from fresh weights of Size (Dir's
	// tokenizer only), over the token ids of the data (CompactVocab).
	Scratch bool
	Size    gpt2.Config
	// Backend runs the model.
	Backend engine.Backend
	// Progress receives progress bars and notes (nil: none).
	Progress progress.Reporter
}

// JobResult is what a Job produced.
type JobResult struct {
	// Scores, one per record, in order.
	Scores []Score
	// Tokens are the prompt and query tokens run through the model, once
	// per record.
	Tokens int
	// Elapsed is the time of scoring (and fine-tuning), loading excluded.
	Elapsed time.Duration
}

// Run scores the records.
func (j *Job) Run(ctx context.Context) (*JobResult, error) {
	rep := progress.Or(j.Progress)
	fc, size := j.Folds.WithDefaultLR(j.Scratch), j.Size
	if j.Scratch && fc.Folds == 0 {
		return nil, fmt.Errorf("from-scratch scoring needs k-fold fine-tuning: an untrained model gives meaningless scores")
	}
	if fc.Folds > 0 {
		if err := fc.Validate(); err != nil {
			return nil, err
		}
	}
	if err := RequireQuery(j.Records, j.Score.Field); err != nil {
		return nil, fmt.Errorf("%s: %w", j.In, err)
	}
	tok, err := LoadTokenizer(j.Dir)
	if err != nil {
		return nil, err
	}
	var base *gpt2.Model
	nPos := size.NPositions
	if !j.Scratch {
		if base, err = gpt2.Load(j.Dir); err != nil {
			return nil, err
		}
		nPos = base.Cfg.NPositions
		if base.Cfg.VocabSize != tok.VocabSize() {
			return nil, fmt.Errorf("%s: the tokenizer has %d tokens but config.json says vocab_size %d", j.Dir, tok.VocabSize(), base.Cfg.VocabSize)
		}
	}
	if !j.Score.Truncate {
		if err := CheckContext(tok, j.Records, j.Score.Field, nPos); err != nil {
			return nil, fmt.Errorf("%s: %w", j.In, err)
		}
	}
	ex, truncated, err := EncodeRecords(tok, j.Records, j.Score, nPos)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.In, err)
	}
	if truncated > 0 {
		rep.Notef("score: truncated %d of %d records to %d tokens", truncated, len(j.Records), nPos)
	}
	if j.Scratch {
		// A fresh model emits only the data's tokens (see CompactVocab).
		v := NewCompactVocab(ex, tok.EOS())
		if ex, err = v.Compact(ex); err != nil {
			return nil, err
		}
		size.VocabSize = v.Size()
		rep.Notef("score: from-scratch model over the %d token ids of the data (of %d), learning rate %g", v.Size(), tok.VocabSize(), fc.LR)
	}
	rep.Notef("score: engine executor on %s", engine.Describe(j.Backend))
	res := &JobResult{}
	for i := range ex {
		res.Tokens += len(ex[i].Ids)
	}
	start := time.Now()
	if fc.Folds > 0 {
		newModel := func() (*gpt2.Trainer, error) {
			var m *gpt2.Model
			var err error
			if j.Scratch {
				m, err = gpt2.New(size, fc.Seed)
			} else {
				m, err = gpt2.Load(j.Dir)
			}
			if err != nil {
				return nil, err
			}
			// Weights, gradients and AdamW moments stay on the device for
			// the fold; only the best step's weights come back.
			tr, err := gpt2.NewTrainer(m, j.Backend, gpt2.AdamW())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", j.Backend.Name(), err)
			}
			return tr, nil
		}
		res.Scores, err = ScoreFolds(ctx, newModel, ex, j.Score, fc, rep)
	} else {
		ge, gerr := gpt2.NewEngine(base, j.Backend)
		if gerr != nil {
			return nil, fmt.Errorf("%s: %w", j.Backend.Name(), gerr)
		}
		defer ge.Close()
		bar := rep.Bar("score on "+j.Backend.Name(), int64(len(ex)))
		res.Scores, err = ScoreAll(ctx, ge, ex, j.Score, bar)
		bar.Finish()
	}
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// RequireQuery fails on the first record whose scored field is missing,
// not a string, or blank: its score would be that of <|endoftext|> alone.
func RequireQuery(recs []data.Record, field string) error {
	for i := range recs {
		q, err := Field(&recs[i], field)
		if err != nil {
			return err
		}
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("record %d (id %q) has no %q", i+1, recs[i].ID, field)
		}
	}
	return nil
}

// CheckContext fails on the first record whose query alone is surely
// longer than the model's context, before any record is tokenized:
// tokenizing megabytes of text only to refuse it looks like a hang.
func CheckContext(tok *Tokenizer, recs []data.Record, field string, nPos int) error {
	for i := range recs {
		q, err := Field(&recs[i], field)
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

// Write writes r's scores to path, one {"id","score","tokens","ppl"} line
// each, all or nothing (replacing an existing file only with overwrite).
func (r *JobResult) Write(path string, overwrite bool) error {
	return data.WriteOutput(path, overwrite, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for i := range r.Scores {
			if err := enc.Encode(&r.Scores[i]); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
		}
		return nil
	})
}

// Note is the line that reports what r wrote to path and how fast; what
// names the work ("scoring", "fine-tuning and scoring").
func (r *JobResult) Note(path, what string) string {
	return fmt.Sprintf("score: wrote %d scores to %s; %s took %s (%.0f tokens/s)\n",
		len(r.Scores), path, what, r.Elapsed.Round(time.Millisecond), float64(r.Tokens)/r.Elapsed.Seconds())
}
