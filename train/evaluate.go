package train

import (
	"context"
	"strings"

	"compbench/data"
	"compbench/models"
	"compbench/progress"
)

// Evaluate returns the mean token loss and the greedy exact match over
// (at most EvalLimit of) the dev examples. Exact match compares the
// decoded tokens, separators removed, with the record's output tokens.
//
// bar, when set, counts the examples decoded: decoding a large dev set
// takes minutes on a CPU.
func Evaluate(ctx context.Context, m models.Seq2Seq, v *models.Vocab, recs []data.Record, ex []models.Example, cfg *Config, bar *progress.Bar) (loss, em float64, err error) {
	if cfg.EvalLimit > 0 && len(ex) > cfg.EvalLimit {
		ex, recs = ex[:cfg.EvalLimit], recs[:cfg.EvalLimit]
	}
	var tot, toks float64
	for _, bt := range models.Batches(ex, cfg.Batch, cfg.BatchTokens, cfg.BucketWidth, nil) {
		l, err := m.Loss(bt, false, 0, 0)
		if err != nil {
			return 0, 0, err
		}
		tot += l * float64(bt.Tokens)
		toks += float64(bt.Tokens)
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
	}
	dec, err := Decode(ctx, m, ex, DecodeOptions{Beam: 1, MaxLen: cfg.Model.MaxTgtLen, Batch: cfg.Batch, Width: cfg.BucketWidth}, bar)
	if err != nil {
		return 0, 0, err
	}
	hit := 0
	for i := range dec {
		if v.DetokSource(dec[i].Hyps[0].IDs, models.SourceTokens(&recs[i])) == strings.Join(models.Tokens(recs[i].Output), " ") {
			hit++
		}
	}
	return tot / toks, float64(hit) / float64(len(ex)), nil
}
