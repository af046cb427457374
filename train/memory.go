package train

import (
	"compbench/data"
	"compbench/models"
)

// MemPart is one share of a command's working set (models' estimates) and
// the config keys that size it, so a refusal can say what to lower.
type MemPart struct {
	What  string
	Keys  []string
	Bytes float64
}

// WeightsMemory is the weights alone, or with gradients and Adam's two
// moments when training.
func WeightsMemory(c models.Config, srcVocab, tgtVocab int, training bool) MemPart {
	copies, what := 1.0, "the weights"
	if training {
		copies, what = 4, "the weights, gradients and Adam moments"
	}
	return MemPart{what, []string{"model.dim", "model.mlp_dim", "model.layers"}, 4 * copies * models.ParamCount(c, srcVocab, tgtVocab)}
}

// ActivationsMemory is one training step's activations and their
// gradients for rows examples of srcLen and tgtLen tokens.
func ActivationsMemory(c models.Config, rows, srcLen, tgtLen, tgtVocab int) MemPart {
	return MemPart{"a training step's activations", []string{"batch", "model.max_src_len", "model.max_tgt_len"},
		models.ActivationBytes(c, rows, srcLen, tgtLen, tgtVocab)}
}

// DecodeMemory is decoding rows hypotheses up to maxLen tokens, sized by
// keys.
func DecodeMemory(c models.Config, rows, srcLen, maxLen, tgtVocab int, keys ...string) MemPart {
	return MemPart{"decoding", keys, models.DecodeBytes(c, rows, srcLen, maxLen, tgtVocab)}
}

// BatchRows is the rows of a training batch: models.Batches pads every
// batch to Batch rows however few records there are (so the compiled
// graphs keep few shapes), or with BatchTokens to at most that many
// tokens' worth of targets, each at least one bucket wide.
func (c Config) BatchRows() int {
	if c.BatchTokens > 0 {
		return max(1, min(c.Batch, c.BatchTokens/max(c.BucketWidth, 1)))
	}
	return c.Batch
}

// TrainMemory is the working set of training c on recs, evaluating on dev:
// the weights with their optimizer state, a step's activations and, with
// dev records, greedy decoding up to max_tgt_len in batches padded to
// Batch rows. A pretrained model's size is its folder's, which these
// estimates of compbench's own architectures do not cover: nil.
func TrainMemory(c Config, recs, dev []data.Record) []MemPart {
	m := c.Model
	if models.IsPretrained(m.Variant) {
		return nil
	}
	v := models.BuildVocab(recs)
	src, tgt := models.DataLengths(m, recs)
	parts := []MemPart{
		WeightsMemory(m, len(v.Source), len(v.Target), true),
		ActivationsMemory(m, c.BatchRows(), src, tgt, len(v.Target)),
	}
	if len(dev) > 0 {
		dsrc, _ := models.DataLengths(m, dev)
		parts = append(parts, DecodeMemory(m, c.Batch, dsrc, m.MaxTgtLen, len(v.Target), "model.max_tgt_len", "batch"))
	}
	return parts
}
