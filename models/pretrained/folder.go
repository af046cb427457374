// Package pretrained reads pretrained encoder-decoders from Hugging Face
// model folders: T5 (v1.0 and v1.1), which Bogin et al. (2022, §5) and
// Godbole & Jia (2023, §4) fine-tune, and BART (Bogin et al. §5). Open
// reads a folder's config.json, checks every tensor of model.safetensors
// against the shapes the config implies and the tokenizer's vocabulary
// against the embeddings, so a wrong or partial folder fails with one line
// naming the file and the field. LoadT5 and LoadBART (t5.go, bart.go)
// read the weights, and their Graph builds the forward pass and loss as one
// Gorgonia graph for package engine (graph.go), and Save writes the
// weights back as a Hugging Face folder. Not yet here: the run folders,
// fine-tuning and decoding of the commands (train, predict, finetune) over
// these models and their tokenizers.
package pretrained

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/sugarme/tokenizer/pretrained"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/models"
	"compbench/safetensors"
)

// Model types Open reads (config.json's model_type).
const (
	TypeT5   = "t5"
	TypeBART = "bart"
)

// Bounds on a config's sizes and layer counts.
const (
	maxSize   = 1 << 20
	maxLayers = models.MaxLayers
)

// Config is what compbench reads of a Hugging Face config.json, under
// Hugging Face's keys; other keys (dropout, generation settings) are
// ignored. Fields of the other architecture stay zero.
type Config struct {
	// ModelType is "t5" or "bart".
	ModelType string `json:"model_type"`
	// VocabSize is the number of embedding rows (T5 pads it past the
	// tokenizer's vocabulary).
	VocabSize int `json:"vocab_size"`
	// DModel is the width of the residual stream.
	DModel int `json:"d_model"`
	// PadID, EOSID and DecoderStartID are the special token ids; the
	// decoder's first input is DecoderStartID.
	PadID          int `json:"pad_token_id"`
	EOSID          int `json:"eos_token_id"`
	DecoderStartID int `json:"decoder_start_token_id"`

	// T5: DKV is the width of one head (NumHeads·DKV may differ from
	// DModel), DFF the feed-forward width, NumLayers and NumDecoderLayers
	// the blocks per stack (the decoder's default NumLayers).
	DKV              int `json:"d_kv"`
	DFF              int `json:"d_ff"`
	NumHeads         int `json:"num_heads"`
	NumLayers        int `json:"num_layers"`
	NumDecoderLayers int `json:"num_decoder_layers"`
	// RelBuckets and RelMaxDistance are T5's relative-position buckets
	// (defaults 32 and 128).
	RelBuckets     int `json:"relative_attention_num_buckets"`
	RelMaxDistance int `json:"relative_attention_max_distance"`
	// FeedForward is "relu" (v1.0) or "gated-gelu" (v1.1).
	FeedForward string `json:"feed_forward_proj"`
	// TieEmbeddings ties the output layer to the embeddings (T5 v1.0,
	// which also rescales the decoder output by DModel^-0.5; BART).
	TieEmbeddings bool `json:"tie_word_embeddings"`
	// LayerNormEps is T5's RMS-norm epsilon (default 1e-6).
	LayerNormEps float64 `json:"layer_norm_epsilon"`

	// BART: layers, heads and feed-forward widths per stack, learned
	// positions (MaxPositions, stored with an offset of 2 rows), the
	// activation ("gelu": exact) and whether embeddings are scaled by
	// sqrt(DModel).
	EncoderLayers  int    `json:"encoder_layers"`
	DecoderLayers  int    `json:"decoder_layers"`
	EncoderHeads   int    `json:"encoder_attention_heads"`
	DecoderHeads   int    `json:"decoder_attention_heads"`
	EncoderFFN     int    `json:"encoder_ffn_dim"`
	DecoderFFN     int    `json:"decoder_ffn_dim"`
	MaxPositions   int    `json:"max_position_embeddings"`
	Activation     string `json:"activation_function"`
	ScaleEmbedding bool   `json:"scale_embedding"`

	// Dropout in fine-tuning, as Hugging Face trains: T5's dropout_rate
	// (default 0.1) on embeddings, sublayer outputs, the feed-forward
	// hidden layer and attention weights; BART's dropout (0.1) on
	// embeddings and sublayer outputs, attention_dropout (0) on attention
	// weights and activation_dropout (0) on the feed-forward hidden layer.
	DropoutRate       float64 `json:"dropout_rate"`
	Dropout           float64 `json:"dropout"`
	AttentionDropout  float64 `json:"attention_dropout"`
	ActivationDropout float64 `json:"activation_dropout"`
}

// ParseConfig reads config.json's bytes (name is the file, for messages),
// fills Hugging Face's defaults and validates the result.
func ParseConfig(b []byte, name string) (Config, error) {
	var probe struct {
		ModelType        string `json:"model_type"`
		NumDecoderLayers *int   `json:"num_decoder_layers"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	c := Config{TieEmbeddings: true, RelBuckets: 32, RelMaxDistance: 128, FeedForward: "relu", LayerNormEps: 1e-6,
		Activation: "gelu", DecoderStartID: -1, DropoutRate: 0.1, Dropout: 0.1}
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	switch c.ModelType {
	case TypeT5:
		if probe.NumDecoderLayers == nil {
			c.NumDecoderLayers = c.NumLayers
		}
		if c.DecoderStartID < 0 {
			c.DecoderStartID = c.PadID
		}
	case TypeBART:
		if c.DecoderStartID < 0 {
			c.DecoderStartID = c.EOSID
		}
	case "":
		return Config{}, fmt.Errorf("%s: no model_type (want %q or %q)", name, TypeT5, TypeBART)
	default:
		return Config{}, fmt.Errorf("%s: model_type %q is not an encoder-decoder compbench reads (%q or %q)", name, c.ModelType, TypeT5, TypeBART)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// Validate reports the first field that cannot describe a model.
func (c Config) Validate() error {
	type field struct {
		name string
		v    int
	}
	positive := []field{{"vocab_size", c.VocabSize}, {"d_model", c.DModel}}
	switch c.ModelType {
	case TypeT5:
		positive = append(positive, field{"d_kv", c.DKV}, field{"d_ff", c.DFF}, field{"num_heads", c.NumHeads},
			field{"num_layers", c.NumLayers}, field{"num_decoder_layers", c.NumDecoderLayers},
			field{"relative_attention_num_buckets", c.RelBuckets}, field{"relative_attention_max_distance", c.RelMaxDistance})
	case TypeBART:
		positive = append(positive, field{"encoder_layers", c.EncoderLayers}, field{"decoder_layers", c.DecoderLayers},
			field{"encoder_attention_heads", c.EncoderHeads}, field{"decoder_attention_heads", c.DecoderHeads},
			field{"encoder_ffn_dim", c.EncoderFFN}, field{"decoder_ffn_dim", c.DecoderFFN},
			field{"max_position_embeddings", c.MaxPositions})
	default:
		return fmt.Errorf("model_type %q is not %q or %q", c.ModelType, TypeT5, TypeBART)
	}
	for _, f := range positive {
		if f.v < 1 {
			return fmt.Errorf("%s %d < 1", f.name, f.v)
		}
		// Far above any released model; a bound keeps a corrupt file
		// from describing billions of tensors.
		if f.v > maxSize {
			return fmt.Errorf("%s %d > %d", f.name, f.v, maxSize)
		}
	}
	for _, f := range []field{{"num_layers", c.NumLayers}, {"num_decoder_layers", c.NumDecoderLayers},
		{"encoder_layers", c.EncoderLayers}, {"decoder_layers", c.DecoderLayers}} {
		if f.v > maxLayers {
			return fmt.Errorf("%s %d > %d", f.name, f.v, maxLayers)
		}
	}
	for _, f := range []field{{"pad_token_id", c.PadID}, {"eos_token_id", c.EOSID}, {"decoder_start_token_id", c.DecoderStartID}} {
		if f.v < 0 || f.v >= c.VocabSize {
			return fmt.Errorf("%s %d outside the vocabulary of %d", f.name, f.v, c.VocabSize)
		}
	}
	for name, p := range map[string]float64{"dropout_rate": c.DropoutRate, "dropout": c.Dropout, "attention_dropout": c.AttentionDropout, "activation_dropout": c.ActivationDropout} {
		if p < 0 || p >= 1 {
			return fmt.Errorf("%s %v outside [0, 1)", name, p)
		}
	}
	switch c.ModelType {
	case TypeT5:
		if c.FeedForward != "relu" && c.FeedForward != "gated-gelu" {
			return fmt.Errorf("feed_forward_proj %q is not relu (T5 v1.0) or gated-gelu (v1.1)", c.FeedForward)
		}
		if c.RelBuckets < 4 || c.RelMaxDistance < c.RelBuckets/2 {
			return fmt.Errorf("relative_attention_num_buckets %d / relative_attention_max_distance %d: need at least 4 buckets and a distance of half of them", c.RelBuckets, c.RelMaxDistance)
		}
	case TypeBART:
		if c.Activation != "gelu" {
			return fmt.Errorf("activation_function %q is not gelu", c.Activation)
		}
		for _, h := range []field{{"encoder_attention_heads", c.EncoderHeads}, {"decoder_attention_heads", c.DecoderHeads}} {
			if c.DModel%h.v != 0 {
				return fmt.Errorf("d_model %d is not a multiple of %s %d", c.DModel, h.name, h.v)
			}
		}
	}
	return nil
}

// Shapes lists every tensor the model needs, under Hugging Face's names,
// with its shape as stored (linear weights [out, in]); aliases are the
// names a file may also hold for a tied embedding, with the same shape.
func Shapes(c Config) (need map[string][]int, aliases map[string][]int) {
	need, aliases = map[string][]int{}, map[string][]int{}
	d, V := c.DModel, c.VocabSize
	if c.ModelType == TypeT5 {
		inner := c.NumHeads * c.DKV
		need["shared.weight"] = []int{V, d}
		aliases["encoder.embed_tokens.weight"] = []int{V, d}
		aliases["decoder.embed_tokens.weight"] = []int{V, d}
		attn := func(p string) {
			for _, n := range []string{"q", "k", "v"} {
				need[p+n+".weight"] = []int{inner, d}
			}
			need[p+"o.weight"] = []int{d, inner}
		}
		ffn := func(p string) {
			if c.FeedForward == "gated-gelu" {
				need[p+"wi_0.weight"], need[p+"wi_1.weight"] = []int{c.DFF, d}, []int{c.DFF, d}
			} else {
				need[p+"wi.weight"] = []int{c.DFF, d}
			}
			need[p+"wo.weight"] = []int{d, c.DFF}
		}
		for _, st := range []struct {
			name string
			n    int
		}{{"encoder", c.NumLayers}, {"decoder", c.NumDecoderLayers}} {
			for i := 0; i < st.n; i++ {
				p := fmt.Sprintf("%s.block.%d.layer.", st.name, i)
				attn(p + "0.SelfAttention.")
				need[p+"0.layer_norm.weight"] = []int{d}
				if i == 0 {
					need[p+"0.SelfAttention.relative_attention_bias.weight"] = []int{c.RelBuckets, c.NumHeads}
				}
				ff := "1"
				if st.name == "decoder" {
					attn(p + "1.EncDecAttention.")
					need[p+"1.layer_norm.weight"] = []int{d}
					ff = "2"
				}
				ffn(p + ff + ".DenseReluDense.")
				need[p+ff+".layer_norm.weight"] = []int{d}
			}
			need[st.name+".final_layer_norm.weight"] = []int{d}
		}
		if c.TieEmbeddings {
			aliases["lm_head.weight"] = []int{V, d}
		} else {
			need["lm_head.weight"] = []int{V, d}
		}
		return need, aliases
	}
	need["model.shared.weight"] = []int{V, d}
	need["final_logits_bias"] = []int{1, V}
	for _, a := range []string{"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"} {
		aliases[a] = []int{V, d}
	}
	lin := func(name string, out, in int) {
		need[name+".weight"], need[name+".bias"] = []int{out, in}, []int{out}
	}
	norm := func(name string) { need[name+".weight"], need[name+".bias"] = []int{d}, []int{d} }
	for _, st := range []struct {
		name   string
		layers int
		ffn    int
	}{{"encoder", c.EncoderLayers, c.EncoderFFN}, {"decoder", c.DecoderLayers, c.DecoderFFN}} {
		need["model."+st.name+".embed_positions.weight"] = []int{c.MaxPositions + 2, d}
		norm("model." + st.name + ".layernorm_embedding")
		for i := 0; i < st.layers; i++ {
			p := fmt.Sprintf("model.%s.layers.%d.", st.name, i)
			attns := []string{"self_attn"}
			if st.name == "decoder" {
				attns = append(attns, "encoder_attn")
			}
			for _, a := range attns {
				for _, n := range []string{"q_proj", "k_proj", "v_proj", "out_proj"} {
					lin(p+a+"."+n, d, d)
				}
				norm(p + a + "_layer_norm")
			}
			lin(p+"fc1", st.ffn, d)
			lin(p+"fc2", d, st.ffn)
			norm(p + "final_layer_norm")
		}
	}
	return need, aliases
}

// Folder is a checked Hugging Face model folder.
type Folder struct {
	// Dir is the folder; Weights its model.safetensors.
	Dir, Weights string
	// Config is its config.json.
	Config Config
	// TokenizerSize is the tokenizer's vocabulary size (at most VocabSize).
	TokenizerSize int
	// RawConfig is config.json as read, written back unchanged by Save so
	// that the keys compbench does not read survive.
	RawConfig []byte
	// TokenizerFiles are the tokenizer's files in Dir (names).
	TokenizerFiles []string
}

// Open reads and checks the Hugging Face folder dir: config.json,
// model.safetensors (every tensor Shapes lists, with its shape; nothing
// else) and the tokenizer files (T5: tokenizer.json; BART: vocab.json and
// merges.txt), whose vocabulary must fit the embeddings.
func Open(dir string) (*Folder, error) {
	cfgPath := filepath.Join(dir, "config.json")
	b, err := data.ReadFileLimit(cfgPath, data.ConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no config.json (a Hugging Face model folder holds config.json, model.safetensors and the tokenizer files)", dir)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(b, cfgPath)
	if err != nil {
		return nil, err
	}
	f := &Folder{Dir: dir, Weights: filepath.Join(dir, "model.safetensors"), Config: cfg, RawConfig: b,
		TokenizerFiles: []string{"vocab.json", "merges.txt"}}
	if cfg.ModelType == TypeT5 {
		f.TokenizerFiles = []string{"tokenizer.json"}
	}
	if err := f.checkWeights(); err != nil {
		return nil, err
	}
	if f.TokenizerSize, err = tokenizerSize(dir, cfg.ModelType); err != nil {
		return nil, err
	}
	if f.TokenizerSize > cfg.VocabSize {
		return nil, fmt.Errorf("%s: the tokenizer has %d tokens, more than config.json's vocab_size %d (the embedding rows)", dir, f.TokenizerSize, cfg.VocabSize)
	}
	return f, nil
}

func (f *Folder) checkWeights() error {
	if _, err := os.Stat(f.Weights); err != nil {
		if _, e2 := os.Stat(filepath.Join(f.Dir, "pytorch_model.bin")); e2 == nil {
			return fmt.Errorf("%s: only pytorch_model.bin found; convert it to model.safetensors", f.Dir)
		}
		return fmt.Errorf("%s: no model.safetensors", f.Dir)
	}
	r, err := safetensors.Open(f.Weights)
	if err != nil {
		return err
	}
	defer r.Close()
	need, aliases := Shapes(f.Config)
	for _, in := range r.Infos {
		want, ok := need[in.Name]
		if !ok {
			want, ok = aliases[in.Name]
		}
		if !ok {
			return fmt.Errorf("%s: unexpected tensor %q for the %s that config.json describes", f.Weights, in.Name, f.Config.ModelType)
		}
		if !models.SameShape(tensor.Shape(in.Shape), want) {
			return fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", f.Weights, in.Name, in.Shape, want)
		}
	}
	var missing []string
	for n := range need {
		if _, ok := r.Info(n); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%s: %d tensors missing, e.g. %q (config.json implies them)", f.Weights, len(missing), missing[0])
	}
	return nil
}

// tokenizerSize loads the tokenizer files of a model type and returns its
// vocabulary size.
func tokenizerSize(dir, modelType string) (n int, err error) {
	if modelType == TypeT5 {
		path := filepath.Join(dir, "tokenizer.json")
		if _, err := os.Stat(path); err != nil {
			return 0, fmt.Errorf("%s: no tokenizer.json (T5's unigram tokenizer)", dir)
		}
		// The tokenizer library reads it in full, unstoppably.
		if err := data.CheckFileLimit(path, data.VocabFile); err != nil {
			return 0, err
		}
		defer func() {
			if r := recover(); r != nil { // the tokenizer library panics on some malformed files
				err = fmt.Errorf("%s: %v", path, r)
			}
		}()
		tk, err := pretrained.FromFile(path)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		return tk.GetVocabSize(true), nil
	}
	path := filepath.Join(dir, "vocab.json")
	b, err := data.ReadFileLimit(path, data.VocabFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("%s: no vocab.json (BART's byte-level BPE vocabulary)", dir)
	}
	if err != nil {
		return 0, err
	}
	merges := filepath.Join(dir, "merges.txt")
	if _, err := os.Stat(merges); err != nil {
		return 0, fmt.Errorf("%s: no merges.txt (BART's byte-level BPE merges)", dir)
	}
	// The tokenizer library reads it in full, unstoppably.
	if err := data.CheckFileLimit(merges, data.VocabFile); err != nil {
		return 0, err
	}
	var vocab map[string]int
	if err := json.Unmarshal(b, &vocab); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	maxID := -1
	for tok, id := range vocab {
		if id < 0 {
			return 0, fmt.Errorf("%s: token %q has the negative id %d", path, tok, id)
		}
		maxID = max(maxID, id)
	}
	return maxID + 1, nil
}

// TaskPrefix is the source prefix config.json gives task under
// task_specific_params (t5-small's "translation_en_to_de": "translate
// English to German: "), the prefix the model was pretrained with for it.
func (f *Folder) TaskPrefix(task string) (string, error) {
	var probe struct {
		Tasks map[string]struct {
			Prefix *string `json:"prefix"`
		} `json:"task_specific_params"`
	}
	if err := json.Unmarshal(f.RawConfig, &probe); err != nil {
		return "", fmt.Errorf("%s: config.json: %w", f.Dir, err)
	}
	t, ok := probe.Tasks[task]
	if !ok || t.Prefix == nil {
		known := make([]string, 0, len(probe.Tasks))
		for name, t := range probe.Tasks {
			if t.Prefix != nil {
				known = append(known, name)
			}
		}
		sort.Strings(known)
		return "", fmt.Errorf("%s: config.json's task_specific_params has no prefix for task %q (tasks with one: %v)", f.Dir, task, known)
	}
	return *t.Prefix, nil
}
