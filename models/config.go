// Package models is what compbench's sequence-to-sequence model families
// share: the vocabulary (vocab.go), examples and batches (batch.go, with
// the copying models' extended target ids), weights (params.go), the
// run configuration's file format and the --model names with the family
// that builds each (config.go: Variants), and the interfaces every command runs a
// model through (runner.go: Model and Runner; seq2seq.go: Seq2Seq and
// Memory; decode.go: incremental decoding), with the view of compiled
// graphs and their memory budget the families share with package engine
// (graphview.go). The families are packages of their own: models/transformer
// (the Transformer variants and decompositional masks of Shi et al. 2023,
// §4), models/lstm (LSTM with attention, Keysers et al. 2020, App. E, and
// with copying, Bogin et al. 2022, §5.3) and models/gpt2 (the scoring
// language model); train.NewModel makes a model from its --model name.
package models

import (
	"fmt"
	"sort"

	"compbench/attention"
)

// Config is a run's model configuration as config.json holds it: the
// fields of every family side by side, one file format for all. Each
// family reads its own fields into its own Config (transformer.Config,
// lstm.Config; the pretrained models' architecture is their folder's),
// which validates them; Validate here checks the shared fields and that
// no field of another family is set.
type Config struct {
	// Variant is the --model name this config was made from.
	Variant string `json:"variant"`
	// Layers is the number of encoder layers and of decoder layers.
	Layers int `json:"layers"`
	// Heads is the number of attention heads; it divides Dim.
	Heads int `json:"heads"`
	// Dim is the embedding and hidden size.
	Dim int `json:"dim"`
	// MLPDim is the inner size of the position-wise feed-forward layer.
	MLPDim int `json:"mlp_dim"`
	// Dropout is the drop probability on embeddings, sublayer outputs and
	// the feed-forward hidden layer.
	Dropout float64 `json:"dropout"`
	// Relative replaces sinusoidal positions with learned relative-position
	// biases per head (Shaw et al. 2018, T5 buckets).
	Relative bool `json:"relative"`
	// RelBuckets is the number of relative-position buckets.
	RelBuckets int `json:"rel_buckets"`
	// RelMaxDistance is the distance from which all positions share the
	// last bucket.
	RelMaxDistance int `json:"rel_max_distance"`
	// Separators puts a separator token after every program part.
	Separators bool `json:"separators"`
	// Mask is the decoder self-attention mask: causal, sep-full,
	// sep-to-sep-and-last or sep-to-last (Shi et al. §4).
	Mask string `json:"mask"`
	// MaxSrcLen is the longest source sequence, in tokens.
	MaxSrcLen int `json:"max_src_len"`
	// MaxTgtLen is the longest target sequence, EOS and separators included.
	MaxTgtLen int `json:"max_tgt_len"`
	// SrcVocab and TgtVocab are the vocabulary sizes, set from the data.
	SrcVocab int `json:"src_vocab"`
	TgtVocab int `json:"tgt_vocab"`
	// Encoder is the LSTM models' encoder: "lstm" (bidirectional LSTM; also
	// when empty) or "transformer" (Transformer encoder layers of width Dim
	// and feed-forward size MLPDim, see models/lstm). Empty for the
	// Transformer models.
	Encoder string `json:"encoder,omitempty"`
	// EncoderLayers is the number of "transformer" encoder layers (0: Layers).
	EncoderLayers int `json:"encoder_layers,omitempty"`
	// EncoderHeads is the attention heads of the "transformer" encoder.
	EncoderHeads int `json:"encoder_heads,omitempty"`
	// IOEncoder is how the Transformer reads an I/O specification
	// (RobustFill sources "in -> out | in -> out ..."): "flat" (also when
	// empty) reads it as one sequence; "double" encodes each example apart
	// and the decoder attends to the concatenated encoded outputs (Shi et
	// al. §4 after Devlin et al. 2017; see models/transformer).
	IOEncoder string `json:"io_encoder,omitempty"`
	// UTSteps is the Universal Transformer's number of recurrent steps
	// (--model universal): its one encoder layer and one decoder layer are
	// each applied UTSteps times with shared weights, and Layers is
	// unused. 0 for every other model.
	UTSteps int `json:"ut_steps,omitempty"`
	// ACT gives the Universal Transformer adaptive computation time
	// (Graves 2016, as Dehghani et al. §2.2): each position halts on its
	// own, UTSteps is then the most steps, and the ponder cost is added to
	// the training loss (models/transformer/universal.go).
	ACT bool `json:"act,omitempty"`
	// Pretrained is the Hugging Face folder a t5 or bart model starts
	// from (train --init hf:DIR; models/pretrained). Its config.json fixes
	// the architecture, so Layers, Heads, Dim, MLPDim, Dropout and the
	// attention options are unused. Empty for every other model.
	Pretrained string `json:"pretrained,omitempty"`
	// Prefix is text put before every source, as T5 is fine-tuned with a
	// task prefix ("translate English to German: "; its config.json's
	// task_specific_params). Empty: none.
	Prefix string `json:"prefix,omitempty"`
}

// MaxLayers bounds layers, encoder_layers and ut_steps. Building a
// model's graphs takes time superlinear in its depth (a 64-layer
// Transformer about 3 s of CPU, 128 layers 8 s, 1,000 layers minutes, all
// before the first step and deaf to Ctrl-C); the published models have 2
// to 24.
const MaxLayers = 64

// DefaultUTSteps is the Universal Transformer's number of recurrent steps
// when a config does not say: tensor2tensor's num_rec_steps, which is
// num_hidden_layers, 6 in Keysers et al.'s setting (App. E, Table 6).
const DefaultUTSteps = 6

// I/O encoders (Config.IOEncoder).
const (
	IOFlat   = "flat"
	IODouble = "double"
)

// DoubleIO reports whether the model encodes I/O examples with double
// attention.
func (c *Config) DoubleIO() bool { return c.IOEncoder == IODouble }

// DefaultConfig is the paper-size model: 3 layers, 4 heads, embedding 256,
// MLP 512, dropout 0.1 (Shi et al. App. C).
//
// The length limits hold every RobustFill example of every task whole
// (docs/robustfill.md, "Sequence lengths"); the paper states none. A
// specification has 4 examples of an input of at most 20 characters,
// "->" and an output of at most 20 characters per program part, and "|"
// between examples: 887 tokens at 10 parts (567 at 6, which the 6-part
// tasks reach). The longest program, 10 parts of 12 tokens with a
// separator each and EOS, is 131 tokens. Batches are padded to their
// longest example, not to these limits, so shorter data (SCAN) is not
// padded to them.
func DefaultConfig() Config {
	return Config{
		Variant: "transformer", Layers: 3, Heads: 4, Dim: 256, MLPDim: 512,
		Dropout: 0.1, RelBuckets: 32, RelMaxDistance: 128, Mask: "causal",
		MaxSrcLen: 1024, MaxTgtLen: 136,
	}
}

// Variants are the --model names: the family that builds each, and what
// each changes in a config. The decompositional masks sit on top of
// relative attention with separators, as in the paper (§4). A new model
// family is a package of its own (as models/transformer and models/lstm),
// its names here and its constructor in train's families (train.NewModel).
var Variants = map[string]Variant{
	"transformer":         {"transformer", func(c *Config) {}},
	"relative":            {"transformer", func(c *Config) { c.Relative = true }},
	"transformer-sep":     {"transformer", func(c *Config) { c.Separators = true }},
	"relative-sep":        {"transformer", func(c *Config) { c.Relative, c.Separators = true, true }},
	"sep-full":            {"transformer", func(c *Config) { c.Relative, c.Separators, c.Mask = true, true, "sep-full" }},
	"sep-to-sep-and-last": {"transformer", func(c *Config) { c.Relative, c.Separators, c.Mask = true, true, "sep-to-sep-and-last" }},
	"sep-to-last":         {"transformer", func(c *Config) { c.Relative, c.Separators, c.Mask = true, true, "sep-to-last" }},
	"lstm-attention":      {"lstm", func(c *Config) { c.Heads = 1 }}, // heads unused, any --dim valid
	"lstm-copy":           {"lstm", func(c *Config) { c.Heads = 1 }}, // with copying (models/lstm)
	"universal": {"transformer", func(c *Config) { // Universal Transformer (models/transformer/universal.go)
		if c.UTSteps == 0 {
			c.UTSteps = DefaultUTSteps
		}
	}},
	"t5":   {"pretrained", func(c *Config) {}}, // from a Hugging Face folder (models/pretrained)
	"bart": {"pretrained", func(c *Config) {}},
}

// Variant is one --model name.
type Variant struct {
	// Family is the key of the family's constructor in train's families
	// (train.NewModel).
	Family string
	// Apply sets the variant's fields on a config.
	Apply func(*Config)
}

// VariantNames lists Variants sorted.
func VariantNames() []string {
	out := make([]string, 0, len(Variants))
	for k := range Variants {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ApplyVariant sets the variant's fields on c, resetting the ones variants
// change first so that switching variants is clean.
func (c *Config) ApplyVariant(name string) error {
	v, ok := Variants[name]
	if !ok {
		return fmt.Errorf("unknown model %q (known: %v)", name, VariantNames())
	}
	c.Variant, c.Relative, c.Separators, c.Mask = name, false, false, "causal"
	if name != Universal {
		c.UTSteps, c.ACT = 0, false
	}
	v.Apply(c)
	return nil
}

// CheckVariantFields refuses a config file's attention fields that
// applying a --model name over it would replace without a word: given is
// the config as the file left it, set the model keys the file holds, and
// applied the config after ApplyVariant. Each of mask, relative and
// separators the file sets must be the variant's own value; a mask must
// also name a mask, even one the variant replaces.
func CheckVariantFields(given Config, set map[string]bool, applied Config) error {
	if set["mask"] {
		if _, err := attention.ParseMask(given.Mask); err != nil {
			return fmt.Errorf("model: %w", err)
		}
		if given.Mask != applied.Mask {
			return fmt.Errorf("model: mask %q conflicts with the model %s, whose mask is %q: drop the mask, or choose the model that has it", given.Mask, applied.Variant, applied.Mask)
		}
	}
	for _, f := range []struct {
		key         string
		given, want bool
	}{{"relative", given.Relative, applied.Relative}, {"separators", given.Separators, applied.Separators}} {
		if set[f.key] && f.given != f.want {
			return fmt.Errorf("model: %s %v conflicts with the model %s, which has %s %v: drop it, or choose a model that has it", f.key, f.given, applied.Variant, f.key, f.want)
		}
	}
	return nil
}

// Validate checks what a run's configuration says of every family: the
// variant, the shared fields, and that no field of another family is set
// (the family's own fields are its Config's Validate: transformer.Config,
// lstm.Config; train.ValidateModel runs both).
func (c *Config) Validate() error {
	v, ok := Variants[c.Variant]
	if !ok {
		return fmt.Errorf("model: unknown variant %q (known: %v)", c.Variant, VariantNames())
	}
	if v.Family == "pretrained" {
		return c.validatePretrained()
	}
	switch {
	case c.Pretrained != "" || c.Prefix != "":
		return fmt.Errorf("model: pretrained and prefix apply to the t5 and bart models only, not %s", c.Variant)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("model: dropout %v outside [0, 1)", c.Dropout)
	case c.MaxSrcLen < 1 || c.MaxTgtLen < 2:
		return fmt.Errorf("model: max_src_len %d / max_tgt_len %d too small", c.MaxSrcLen, c.MaxTgtLen)
	case c.Layers > MaxLayers || c.EncoderLayers > MaxLayers || c.UTSteps > MaxLayers:
		return fmt.Errorf("model: layers %d, encoder_layers %d, ut_steps %d: at most %d each", c.Layers, c.EncoderLayers, c.UTSteps, MaxLayers)
	case c.Variant != Universal && c.UTSteps != 0:
		return fmt.Errorf("model: ut_steps applies to the universal model only, not %s", c.Variant)
	case c.Variant != Universal && c.ACT:
		return fmt.Errorf("model: act applies to the universal model only, not %s", c.Variant)
	case v.Family != "lstm" && c.Encoder != "":
		return fmt.Errorf("model: encoder %q applies to the LSTM models only", c.Encoder)
	case v.Family == "lstm" && c.IOEncoder != "" && c.IOEncoder != IOFlat:
		return fmt.Errorf("model: io_encoder %q is a Transformer option, not one of %s", c.IOEncoder, c.Variant)
	case v.Family == "lstm" && c.Encoder == EncoderTransformer && c.Relative:
		return fmt.Errorf("model: the LSTM models' Transformer encoder has no relative attention")
	}
	mask, err := attention.ParseMask(c.Mask)
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	if mask.Decompositional() && !c.Separators {
		return fmt.Errorf("model: mask %q needs separators", c.Mask)
	}
	return nil
}

// IsPretrained reports whether a --model name starts from a pretrained
// folder (t5, bart).
func IsPretrained(variant string) bool { return Variants[variant].Family == "pretrained" }

// validatePretrained checks a t5 or bart config: the folder's config.json
// fixes the architecture, so only the lengths and the options a pretrained
// model cannot take are checked here.
func (c *Config) validatePretrained() error {
	switch {
	case c.Pretrained == "":
		return fmt.Errorf("model: %s starts from a Hugging Face folder: train --init hf:DIR", c.Variant)
	case c.MaxSrcLen < 1 || c.MaxTgtLen < 2:
		return fmt.Errorf("model: max_src_len %d / max_tgt_len %d too small", c.MaxSrcLen, c.MaxTgtLen)
	case c.Separators || c.Relative || c.Mask != "causal":
		return fmt.Errorf("model: %s takes no separators, relative attention or decompositional mask", c.Variant)
	case c.Encoder != "" || c.IOEncoder != "" || c.UTSteps != 0 || c.ACT:
		return fmt.Errorf("model: %s takes no encoder, io_encoder, ut_steps or act", c.Variant)
	}
	return nil
}

// Universal is the --model name of the Universal Transformer.
const Universal = "universal"

// IsLSTM reports whether a --model name is one of the recurrent models.
func IsLSTM(variant string) bool { return Variants[variant].Family == "lstm" }

// Encoder names for Config.Encoder.
const (
	EncoderLSTM        = "lstm"
	EncoderTransformer = "transformer"
)

// Copies reports whether the --model name copies from the source, so
// that its targets use the extended vocabulary (see LSTM).
func Copies(variant string) bool { return variant == "lstm-copy" }
