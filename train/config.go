// Package train trains, evaluates, decodes and fine-tunes compbench's
// sequence-to-sequence models with the settings of Shi et al. (2023, §5 and
// App. C): Adam (0.9, 0.98, 1e-9), linear warmup then inverse square root
// decay, label smoothing, global-norm clipping, length-bucketed batches,
// periodic dev evaluation with the best checkpoint kept, exact resumption,
// greedy and beam decoding (GNMT length penalty), and few-shot fine-tuning
// with a constant learning rate.
package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"compbench/data"
	"compbench/models"
	"compbench/models/lstm"
)

// Config is everything a run needs besides its data: saved as
// RUN/config.json and read back on resume.
type Config struct {
	// Model is the architecture.
	Model models.Config `json:"model"`
	// Steps is the number of optimizer steps.
	Steps int `json:"steps"`
	// Batch is the number of examples per batch (the rows of each graph).
	Batch int `json:"batch"`
	// BatchTokens, when > 0, sets the rows per batch to
	// max(1, BatchTokens / padded target length), capped at Batch, so
	// long-sequence batches hold fewer examples.
	BatchTokens int `json:"batch_tokens"`
	// BucketWidth rounds padded lengths up to a multiple of it, bounding
	// the number of distinct graph shapes.
	BucketWidth int `json:"bucket_width"`
	// LR is the peak learning rate.
	LR float64 `json:"lr"`
	// Warmup is the number of linear warmup steps; 0 means a constant LR.
	Warmup int `json:"warmup"`
	// Schedule is the learning-rate schedule: "rsqrt" (also when empty;
	// Shi et al.'s warmup then inverse square root) or "polynomial" (Bogin
	// et al.'s fine-tuning: warmup then linear decay to 0 at Steps).
	Schedule string `json:"schedule,omitempty"`
	// Beta1, Beta2 and Eps are Adam's constants.
	Beta1 float64 `json:"beta1"`
	Beta2 float64 `json:"beta2"`
	Eps   float64 `json:"eps"`
	// WeightDecay is AdamW's decoupled weight decay (0: Adam), applied to
	// every weight.
	WeightDecay float64 `json:"weight_decay,omitempty"`
	// LabelSmoothing is the smoothing of the target distribution.
	LabelSmoothing float64 `json:"label_smoothing"`
	// ClipNorm is the global gradient-norm limit; 0 disables clipping.
	ClipNorm float64 `json:"clip_norm"`
	// EvalEvery is the number of steps between dev evaluations and
	// checkpoints; 0 evaluates only at the end.
	EvalEvery int `json:"eval_every"`
	// EvalLimit caps the dev examples decoded for exact match (0: all).
	EvalLimit int `json:"eval_limit"`
	// Seed drives initialisation, batch order and dropout.
	Seed uint64 `json:"seed"`
	// Strict fails on over-long examples instead of truncating them.
	Strict bool `json:"strict"`
	// Preset names the preset (cpu-small, paper) the settings started
	// from, before --config and flags; empty when none was asked for.
	Preset string `json:"preset,omitempty"`
}

// DefaultConfig is the paper's setting (Shi et al. App. C): lr 1e-3,
// warmup 16000; the batch size and step count suit a CPU.
func DefaultConfig() Config {
	return Config{
		Model: models.DefaultConfig(), Steps: 10000, Batch: 64, BucketWidth: 8,
		LR: 1e-3, Warmup: 16000, Beta1: 0.9, Beta2: 0.98, Eps: 1e-9,
		LabelSmoothing: 0, ClipNorm: 1, EvalEvery: 1000, EvalLimit: 1000, Seed: 1,
	}
}

// DefaultsFor is the config a new run of the --model name variant starts
// from: DefaultConfig for the Transformers; for the LSTM models Keysers et
// al.'s sizes (hidden 512, 2 layers, dropout 0.4, App. E) with a constant
// rate (their LSTM has no schedule, App. E, Table 6; decision: the rate
// stays 1e-3, Adam as for the Transformer, rather than tensor2tensor's
// 0.03, which belongs to that framework's optimizer setting); for the
// pretrained models PretrainedConfig, its folder still to be set.
func DefaultsFor(variant string) Config {
	cfg := DefaultConfig()
	switch {
	case models.IsLSTM(variant):
		cfg.Model = lstm.DefaultConfig(variant)
		cfg.Warmup = 0
	case models.IsPretrained(variant):
		cfg = PretrainedConfig(variant, "")
	}
	return cfg
}

// PretrainedConfig is the setting of fine-tuning a pretrained T5 or BART,
// Bogin et al.'s (2022, App. B; their AllenNLP configuration): AdamW at
// 3e-5 with betas (0.9, 0.999), eps 1e-8 and no weight decay, batch 28,
// polynomial decay (power 1, to 0, no warmup), gradient-norm clipping 1.0.
// Sources and targets are limited to 128 pieces each.
func PretrainedConfig(variant, dir string) Config {
	c := DefaultConfig()
	c.Model = models.Config{Variant: variant, Pretrained: dir, Mask: "causal", MaxSrcLen: 128, MaxTgtLen: 128}
	c.Batch, c.LR, c.Warmup, c.Schedule = 28, 3e-5, 0, SchedulePolynomial
	c.Beta1, c.Beta2, c.Eps, c.ClipNorm = 0.9, 0.999, 1e-8, 1
	return c
}

// Learning-rate schedules (Config.Schedule).
const (
	ScheduleRsqrt      = "rsqrt"
	SchedulePolynomial = "polynomial"
)

// Rate is the learning rate of step (from 1) under the schedule.
func (c *Config) Rate(step int) float64 {
	if c.Schedule == SchedulePolynomial {
		return PolynomialDecay(c.LR, c.Warmup, c.Steps, step)
	}
	return LearningRate(c.LR, c.Warmup, step)
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	if err := ValidateModel(c.Model); err != nil {
		return err
	}
	switch {
	case c.Steps < 1:
		return fmt.Errorf("steps %d: train at least 1 step", c.Steps)
	case c.Batch < 1:
		return fmt.Errorf("batch %d < 1", c.Batch)
	case c.BatchTokens < 0:
		return fmt.Errorf("batch_tokens %d < 0", c.BatchTokens)
	case c.BucketWidth < 1:
		return fmt.Errorf("bucket_width %d < 1", c.BucketWidth)
	case !(c.LR > 0):
		return fmt.Errorf("lr %v must be > 0", c.LR)
	case c.Warmup < 0:
		return fmt.Errorf("warmup %d < 0", c.Warmup)
	case c.Schedule != "" && c.Schedule != ScheduleRsqrt && c.Schedule != SchedulePolynomial:
		return fmt.Errorf("schedule %q: want %q or %q", c.Schedule, ScheduleRsqrt, SchedulePolynomial)
	case c.WeightDecay < 0 || c.WeightDecay >= 1:
		return fmt.Errorf("weight_decay %v outside [0, 1)", c.WeightDecay)
	case c.Beta1 < 0 || c.Beta1 >= 1 || c.Beta2 < 0 || c.Beta2 >= 1 || !(c.Eps > 0):
		return fmt.Errorf("adam beta1 %v / beta2 %v / eps %v out of range", c.Beta1, c.Beta2, c.Eps)
	case c.LabelSmoothing < 0 || c.LabelSmoothing >= 1:
		return fmt.Errorf("label_smoothing %v outside [0, 1)", c.LabelSmoothing)
	case c.ClipNorm < 0:
		return fmt.Errorf("clip_norm %v < 0", c.ClipNorm)
	case c.EvalEvery < 0 || c.EvalLimit < 0:
		return fmt.Errorf("eval_every %d / eval_limit %d < 0", c.EvalEvery, c.EvalLimit)
	}
	return nil
}

// ModelKeys lists the keys of a config file's "model" object.
func ModelKeys(path string) (map[string]bool, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var f struct {
		Model map[string]json.RawMessage `json:"model"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	keys := map[string]bool{}
	for k := range f.Model {
		keys[k] = true
	}
	return keys, nil
}

// LoadConfig reads a config JSON over base: keys present replace base's
// values, unknown keys are errors.
func LoadConfig(path string, base Config) (Config, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return base, fmt.Errorf("config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	c := base
	if err := dec.Decode(&c); err != nil {
		return base, fmt.Errorf("config %s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return base, fmt.Errorf("config %s: data after the JSON object", path)
	}
	return c, nil
}

// Marshal gives the bytes of config.json.
func (c *Config) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SetKey sets one setting by its config.json key ("steps", "model.dim"),
// as a --config file holding only that key would: value is marshalled to
// JSON and decoded over c. An unknown key or a value of the wrong type is
// an error; c is unchanged then. Range checks are Validate's.
func (c *Config) SetKey(key string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	parts := strings.Split(key, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		k, err := json.Marshal(parts[i])
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		b = append(append(append(append([]byte("{"), k...), ':'), b...), '}')
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	next := *c
	if err := dec.Decode(&next); err != nil {
		return fmt.Errorf("config key %s: %w", key, err)
	}
	*c = next
	return nil
}
