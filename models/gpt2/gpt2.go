// Package gpt2 is the GPT-2 language model Godbole & Jia score examples
// with (§3.1: likelihood splits): the model and its Hugging Face folder
// format (gpt2.go), its Gorgonia graph (gpt2_graph.go), and its scoring
// and fine-tuning on package engine's executor (engine_gpt2*.go).
package gpt2

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"compbench/data"
	"compbench/models"
	"compbench/safetensors"
)

// Model is the decoder-only language model of Radford et al. (2019) as used by
// Godbole & Jia (§3.1) to score examples: learned absolute positions, pre-LN
// blocks of causal self-attention and a GELU (tanh) MLP, a final LayerNorm and
// an output projection tied to the token embedding. Weights are float32;
// Engine and Trainer run the model on an engine backend.
type Model struct {
	// Cfg is the validated configuration.
	Cfg Config
	// p holds the weights in a fixed order (gpt2Shapes) under Hugging
	// Face's names, without host gradients (Params.Adopt): training keeps
	// them on the backend.
	p models.Params
	// MaxGraphs bounds the compiled programs an engine (Engine,
	// Trainer) keeps, one per batch shape and purpose; least recently
	// used ones are dropped and recompiled when needed. Default 8.
	MaxGraphs int
	// GraphBudget bounds the bytes of those programs' own buffers (arena,
	// inputs, outputs and gradients; not the shared weights); <= 0 means no
	// byte bound. A program over the budget on its own is still kept,
	// alone. Default DefaultGraphBudget, or what SetGraphBudget set.
	GraphBudget int64
}

// Config is the subset of a Hugging Face GPT-2 config.json that fixes
// the architecture; JSON names are Hugging Face's.
type Config struct {
	// NLayer is the number of Transformer blocks.
	NLayer int `json:"n_layer"`
	// NHead is the number of attention heads; it divides NEmbd.
	NHead int `json:"n_head"`
	// NEmbd is the width of the residual stream.
	NEmbd int `json:"n_embd"`
	// NPositions is the longest sequence the position table covers.
	NPositions int `json:"n_positions"`
	// VocabSize is the number of token ids (50257 for GPT-2's BPE).
	VocabSize int `json:"vocab_size"`
	// LayerNormEpsilon is the variance floor of every LayerNorm.
	LayerNormEpsilon float64 `json:"layer_norm_epsilon"`
}

// DefaultConfig is GPT-2 small (124M parameters).
func DefaultConfig() Config {
	return Config{NLayer: 12, NHead: 12, NEmbd: 768, NPositions: 1024, VocabSize: 50257, LayerNormEpsilon: 1e-5}
}

// Size returns a named size: "tiny" (for tests and quick from-scratch
// runs), "small" (124M), "medium" (355M), all over GPT-2's vocabulary.
func Size(name string) (Config, error) {
	c := DefaultConfig()
	switch name {
	case "tiny":
		c.NLayer, c.NHead, c.NEmbd, c.NPositions = 2, 4, 128, 256
	case "small":
	case "medium":
		c.NLayer, c.NHead, c.NEmbd = 24, 16, 1024
	default:
		return c, fmt.Errorf("unknown GPT-2 size %q (want tiny, small or medium)", name)
	}
	return c, nil
}

// Validate checks that the sizes are positive and consistent.
func (c Config) Validate() error {
	switch {
	case c.NLayer <= 0 || c.NHead <= 0 || c.NEmbd <= 0 || c.NPositions <= 0 || c.VocabSize <= 0:
		return fmt.Errorf("gpt2 config: n_layer %d, n_head %d, n_embd %d, n_positions %d and vocab_size %d must all be positive",
			c.NLayer, c.NHead, c.NEmbd, c.NPositions, c.VocabSize)
	case c.NEmbd%c.NHead != 0:
		return fmt.Errorf("gpt2 config: n_embd %d is not divisible by n_head %d", c.NEmbd, c.NHead)
	case !(c.LayerNormEpsilon > 0) || c.LayerNormEpsilon > 1:
		return fmt.Errorf("gpt2 config: layer_norm_epsilon %g not in (0, 1]", c.LayerNormEpsilon)
	}
	return nil
}

// ReadConfig reads a Hugging Face config.json. A missing
// layer_norm_epsilon takes GPT-2's 1e-5; fields other than the architecture
// (activation, dropout, task settings) are ignored, but an activation other
// than GELU (tanh) is an error.
func ReadConfig(path string) (Config, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return Config{}, err
	}
	var raw struct {
		Config
		Activation *string `json:"activation_function"`
		ModelType  string  `json:"model_type"`
	}
	raw.LayerNormEpsilon = 1e-5
	if err := json.Unmarshal(b, &raw); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if raw.ModelType != "" && raw.ModelType != "gpt2" {
		return Config{}, fmt.Errorf("%s: model_type %q is not gpt2", path, raw.ModelType)
	}
	if raw.Activation != nil && *raw.Activation != "gelu_new" && *raw.Activation != "gelu_pytorch_tanh" {
		return Config{}, fmt.Errorf("%s: activation_function %q is not GELU (tanh)", path, *raw.Activation)
	}
	if err := raw.Config.Validate(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return raw.Config, nil
}

// gpt2Shapes lists every parameter name (Hugging Face's, without the
// "transformer." prefix) with its shape. Conv1D weights are [in, out].
func gpt2Shapes(c Config) ([]string, map[string][]int) {
	E, V, P := c.NEmbd, c.VocabSize, c.NPositions
	shapes := map[string][]int{"wte.weight": {V, E}, "wpe.weight": {P, E}, "ln_f.weight": {E}, "ln_f.bias": {E}}
	names := []string{"wte.weight", "wpe.weight"}
	for i := 0; i < c.NLayer; i++ {
		p := fmt.Sprintf("h.%d.", i)
		for _, s := range []struct {
			n     string
			shape []int
		}{
			{"ln_1.weight", []int{E}}, {"ln_1.bias", []int{E}},
			{"attn.c_attn.weight", []int{E, 3 * E}}, {"attn.c_attn.bias", []int{3 * E}},
			{"attn.c_proj.weight", []int{E, E}}, {"attn.c_proj.bias", []int{E}},
			{"ln_2.weight", []int{E}}, {"ln_2.bias", []int{E}},
			{"mlp.c_fc.weight", []int{E, 4 * E}}, {"mlp.c_fc.bias", []int{4 * E}},
			{"mlp.c_proj.weight", []int{4 * E, E}}, {"mlp.c_proj.bias", []int{E}},
		} {
			names = append(names, p+s.n)
			shapes[p+s.n] = s.shape
		}
	}
	names = append(names, "ln_f.weight", "ln_f.bias")
	return names, shapes
}

func newGPT2Shell(cfg Config) (*Model, []string, map[string][]int, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, err
	}
	names, shapes := gpt2Shapes(cfg)
	m := &Model{Cfg: cfg, MaxGraphs: 8, GraphBudget: models.GraphBudget()}
	return m, names, shapes, nil
}

func (m *Model) add(name string, shape []int, w []float32) {
	m.p.Adopt(name, shape, w)
}

// New makes a model with GPT-2's initialisation drawn from seed: normal
// weights with std 0.02, output projections of each block scaled by
// 1/sqrt(2 n_layer) (Radford et al. 2019, §2.3), LayerNorm gains 1, biases 0.
func New(cfg Config, seed uint64) (*Model, error) {
	m, names, shapes, err := newGPT2Shell(cfg)
	if err != nil {
		return nil, err
	}
	rng := data.SubRand(seed, "gpt2-init")
	for _, n := range names {
		shape := shapes[n]
		size := 1
		for _, d := range shape {
			size *= d
		}
		w := make([]float32, size)
		switch {
		case strings.HasSuffix(n, "ln_1.weight") || strings.HasSuffix(n, "ln_2.weight") || n == "ln_f.weight":
			for i := range w {
				w[i] = 1
			}
		case strings.HasSuffix(n, ".bias"):
		default:
			std := 0.02
			if strings.HasSuffix(n, "c_proj.weight") {
				std /= math.Sqrt(2 * float64(cfg.NLayer))
			}
			for i := range w {
				w[i] = float32(rng.NormFloat64() * std)
			}
		}
		m.addHF(n, shape, w)
	}
	return m, nil
}

// ignoredGPT2Tensors are checkpoint entries that carry no weights: the causal
// mask buffers of older Hugging Face versions and the output projection,
// which GPT-2 ties to wte.
func ignoredGPT2Tensor(name string) bool {
	return name == "lm_head.weight" || strings.HasSuffix(name, ".attn.bias") && strings.HasPrefix(name, "h.") && strings.Count(name, ".") == 3 ||
		strings.HasSuffix(name, ".attn.masked_bias")
}

// Load reads a Hugging Face GPT-2 folder: config.json and
// model.safetensors (names with or without the "transformer." prefix; F32,
// F16 or BF16). Every weight must be present with its exact shape; unknown
// tensors are an error, so a checkpoint of another architecture is never
// half-loaded.
func Load(dir string) (*Model, error) {
	cfgPath := filepath.Join(dir, "config.json")
	if _, err := os.Stat(cfgPath); err != nil {
		return nil, fmt.Errorf("load GPT-2 from %s: %w", dir, err)
	}
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	wPath := filepath.Join(dir, "model.safetensors")
	if _, err := os.Stat(wPath); err != nil {
		if _, e2 := os.Stat(filepath.Join(dir, "pytorch_model.bin")); e2 == nil {
			return nil, fmt.Errorf("load GPT-2 from %s: only pytorch_model.bin found; convert it to model.safetensors", dir)
		}
		return nil, fmt.Errorf("load GPT-2 from %s: %w", dir, err)
	}
	r, err := safetensors.Open(wPath)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	m, names, shapes, err := newGPT2Shell(cfg)
	if err != nil {
		return nil, err
	}
	stored := map[string]string{} // name without prefix -> name in file
	for _, in := range r.Infos {
		short := strings.TrimPrefix(in.Name, "transformer.")
		if _, dup := stored[short]; dup {
			return nil, fmt.Errorf("%s: tensor %q is stored both with and without the transformer. prefix", wPath, short)
		}
		stored[short] = in.Name
		if _, ok := shapes[short]; !ok && !ignoredGPT2Tensor(short) {
			return nil, fmt.Errorf("%s: unexpected tensor %q for a GPT-2 with %d layers", wPath, in.Name, cfg.NLayer)
		}
	}
	var missing []string
	for _, n := range names {
		if _, ok := stored[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%s: %d weights missing, e.g. %q (config.json says %d layers)", wPath, len(missing), missing[0], cfg.NLayer)
	}
	for _, n := range names {
		info, _ := r.Info(stored[n])
		if !equalShape(info.Shape, shapes[n]) {
			return nil, fmt.Errorf("%s: tensor %q has shape %v, config.json implies %v", wPath, info.Name, info.Shape, shapes[n])
		}
		w, _, err := r.Float32s(info.Name)
		if err != nil {
			return nil, err
		}
		if bad := safetensors.NonFinite(w); bad != "" {
			return nil, fmt.Errorf("%s: tensor %s holds %s", wPath, info.Name, bad)
		}
		m.addHF(n, shapes[n], w)
	}
	return m, nil
}

// qkvParts names the three parts of a fused c_attn weight or bias.
var qkvParts = [3]string{"q", "k", "v"}

// addHF adds a weight given in the Hugging Face layout. The fused query,
// key and value projection c_attn ([E, 3E] and [3E]) is stored as three
// [E, E] and [E] parameters so that each projection is a contiguous matrix.
func (m *Model) addHF(name string, shape []int, w []float32) {
	base, ok := strings.CutSuffix(name, ".c_attn.weight")
	if ok {
		E := shape[0]
		for k, part := range qkvParts {
			p := make([]float32, E*E)
			for r := 0; r < E; r++ {
				copy(p[r*E:(r+1)*E], w[r*3*E+k*E:r*3*E+(k+1)*E])
			}
			m.add(base+".c_attn.weight."+part, []int{E, E}, p)
		}
		return
	}
	if base, ok := strings.CutSuffix(name, ".c_attn.bias"); ok {
		E := shape[0] / 3
		for k, part := range qkvParts {
			m.add(base+".c_attn.bias."+part, []int{E}, append([]float32(nil), w[k*E:(k+1)*E]...))
		}
		return
	}
	m.add(name, shape, w)
}

// hfTensors returns the weights in the Hugging Face layout, c_attn fused.
func (m *Model) hfTensors() ([]safetensors.Tensor, error) {
	names, shapes := gpt2Shapes(m.Cfg)
	ts := make([]safetensors.Tensor, 0, len(names))
	E := m.Cfg.NEmbd
	for _, n := range names {
		var w []float32
		switch {
		case strings.HasSuffix(n, ".c_attn.weight"):
			w = make([]float32, E*3*E)
			for k, part := range qkvParts {
				p := m.weights(n + "." + part)
				for r := 0; r < E; r++ {
					copy(w[r*3*E+k*E:r*3*E+(k+1)*E], p[r*E:(r+1)*E])
				}
			}
		case strings.HasSuffix(n, ".c_attn.bias"):
			for _, part := range qkvParts {
				w = append(w, m.weights(n+"."+part)...)
			}
		default:
			w = m.weights(n)
		}
		t, err := safetensors.FromFloat32s(n, shapes[n], w)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Save writes config.json and model.safetensors (F32, Hugging Face
// names) into dir through out, so a failure leaves nothing behind.
func (m *Model) Save(out *data.OutputSet, dir string) error {
	cw, err := out.Create(filepath.Join(dir, "config.json"))
	if err != nil {
		return err
	}
	cfg := struct {
		Config
		ModelType     string   `json:"model_type"`
		Architectures []string `json:"architectures"`
		Activation    string   `json:"activation_function"`
		NCtx          int      `json:"n_ctx"`
	}{m.Cfg, "gpt2", []string{"GPT2LMHeadModel"}, "gelu_new", m.Cfg.NPositions}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if _, err := cw.Write(append(b, '\n')); err != nil {
		return err
	}
	ww, err := out.Create(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return err
	}
	ts, err := m.hfTensors()
	if err != nil {
		return err
	}
	return safetensors.Write(ww, ts, map[string]string{"format": "pt"})
}

// NumParams counts the scalar weights (the tied output projection once).
func (m *Model) NumParams() int {
	return m.p.Count()
}

// weights returns the backing slice of the named parameter.
func (m *Model) weights(name string) []float32 {
	i, ok := m.p.Index(name)
	if !ok {
		panic(errors.New("models: no GPT-2 parameter " + name)) // programmer bug
	}
	return m.p.Data(i)
}
