package train

import (
	"context"
	"fmt"
	"strings"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/progress"
	"compbench/provenance"
)

// Prediction is one output line of compbench predict.
type Prediction struct {
	// ID is the record's id.
	ID string `json:"id"`
	// Text is the best hypothesis, separators removed.
	Text string `json:"prediction"`
	// Score is its log-probability (greedy) or length-normalised
	// log-probability (beam).
	Score float64 `json:"score"`
	// Beam lists every hypothesis, best first (beam search only).
	Beam []string `json:"beam,omitempty"`
}

// Predict decodes recs with the run's model, on the device UseBackend
// bound it to (the CPU when unbound). Unknown source tokens become <unk>
// and are counted in unknown.
func Predict(ctx context.Context, r *Run, recs []data.Record, o DecodeOptions, rep progress.Reporter) (preds []Prediction, unknown int, err error) {
	if len(recs) == 0 {
		return nil, 0, fmt.Errorf("no records to predict")
	}
	if r.Model == nil {
		release, err := r.UseBackend(nil)
		if err != nil {
			return nil, 0, err
		}
		defer release()
	}
	enc := r.Config.Model.EncodeOptions(false)
	ex, st, err := models.Encode(r.Vocab, recs, enc)
	if err != nil {
		return nil, 0, err
	}
	if o.MaxLen <= 0 {
		o.MaxLen = r.Config.Model.MaxTgtLen
	}
	if o.Width <= 0 {
		o.Width = r.Config.BucketWidth
	}
	bar := progress.Or(rep).Bar("predict", int64(len(ex)))
	defer bar.Finish()
	dec, err := Decode(ctx, r.Model, ex, o, bar)
	if err != nil {
		return nil, 0, err
	}
	preds = make([]Prediction, len(dec))
	for i, d := range dec {
		src := models.SourceTokens(&recs[i])
		p := Prediction{ID: recs[i].ID, Text: r.Vocab.DetokSource(d.Hyps[0].IDs, src), Score: round(d.Hyps[0].Score)}
		if o.Beam > 1 {
			for _, h := range d.Hyps {
				p.Beam = append(p.Beam, r.Vocab.DetokSource(h.IDs, src))
			}
		}
		preds[i] = p
	}
	return preds, st.UnknownSrc, nil
}

// ExactMatch is the fraction of predictions equal to their record's output
// (whitespace-normalised), predictions in record order.
func ExactMatch(recs []data.Record, preds []Prediction) float64 {
	if len(recs) == 0 {
		return 0
	}
	hit := 0
	for i := range recs {
		if preds[i].Text == strings.Join(models.Tokens(recs[i].Output), " ") {
			hit++
		}
	}
	return float64(hit) / float64(len(recs))
}

// FinetuneOptions configure few-shot fine-tuning (Shi et al. §5: one
// batch of 20 training- and 20 test-distribution examples, 30 steps,
// constant learning rate 1e-4).
type FinetuneOptions struct {
	// Steps is the number of updates.
	Steps int
	// LR is the constant learning rate.
	LR float64
	// Out is the new run folder.
	Out string
	// Force replaces an existing run in Out.
	Force bool
	// Progress receives the progress bar and warnings (nil: none).
	Progress progress.Reporter
	// Backend is where to train (see Options.Backend); nil: the CPU.
	Backend engine.Backend
	// Provenance, when set, starts the new run's provenance.jsonl.
	Provenance *provenance.Record
	// Lock is the caller's hold on Out (see Options.Lock); nil: Finetune
	// takes it for the call.
	Lock *RunLock
}

// Finetune trains a copy of base on recs, all in one batch, and writes a
// new run; base is not changed. The vocabulary stays base's: target tokens
// it does not know are a vocabulary mismatch.
func Finetune(ctx context.Context, base *Run, recs []data.Record, o FinetuneOptions) (*Result, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("fine-tuning data is empty")
	}
	cfg := base.Config
	cfg.Steps, cfg.LR, cfg.Warmup, cfg.EvalEvery, cfg.Schedule = o.Steps, o.LR, 0, 0, "" // a constant rate (rsqrt without warmup)
	cfg.Batch, cfg.BatchTokens = len(recs), 0
	// One bucket for every length, so the whole set is one batch: the
	// width is the longest sequence, rounded up to a multiple of 8.
	longest := 1
	for i := range recs {
		longest = max(longest, len(models.SourceTokens(&recs[i])), len(models.Tokens(recs[i].Output))+len(recs[i].Parts)+1)
	}
	cfg.BucketWidth = models.RoundUp(min(longest, max(cfg.Model.MaxSrcLen, cfg.Model.MaxTgtLen)), 8)
	return Train(ctx, cfg, Options{Dir: o.Out, Train: recs, Force: o.Force, Vocab: base.Vocab,
		InitWeights: base.weights, Progress: o.Progress, LogEvery: 1, Backend: o.Backend, Provenance: o.Provenance, Lock: o.Lock})
}

// ExactMatchNote reports exact match, or why there is none: a record
// without an output has nothing to match.
func ExactMatchNote(recs []data.Record, preds []Prediction) string {
	missing := 0
	for i := range recs {
		if strings.TrimSpace(recs[i].Output) == "" {
			missing++
		}
	}
	if missing > 0 {
		return fmt.Sprintf("no exact match: %d of %d records have no output", missing, len(recs))
	}
	return fmt.Sprintf("exact match %.2f%%", 100*ExactMatch(recs, preds))
}

// OutputTokens counts the predicted tokens (separators removed), the
// numerator of predict's throughput.
func OutputTokens(preds []Prediction) float64 {
	n := 0
	for i := range preds {
		n += len(strings.Fields(preds[i].Text))
	}
	return float64(n)
}
