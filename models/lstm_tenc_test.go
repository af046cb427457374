package models

import (
	"math"
	"strings"
	"testing"
)

// tinyTEncLSTM is tinyLSTM with layers decoder layers and a Transformer
// encoder of tenc layers with two heads.
func tinyTEncLSTM(t *testing.T, variant string, dropout float64, layers, tenc int) (*LSTM, *Batch) {
	t.Helper()
	m, bt := tinyLSTMWith(t, variant, dropout, func(c *Config) {
		c.Layers, c.Encoder, c.EncoderLayers, c.EncoderHeads, c.MLPDim = layers, EncoderTransformer, tenc, 2, 6
	})
	// Unit-scale embeddings keep the ReLU inputs of these tiny weights
	// away from the kink, which central differences would straddle.
	for i := range m.p.Data(m.srcEmb) {
		m.p.Data(m.srcEmb)[i] *= 10
	}
	return m, bt
}

// TestLSTMTransformerEncoderMatchesGraph: with a Transformer's weights
// loaded, the engine's encoder computes the Transformer graph's memory.
// Tolerance: the memory is the final LayerNorm's output, entries of order
// one; each side rounds it through about 2·(LayerNorm 3D + attention
// D + S + feed-forward D + MLP) = 80 float32 operations per layer, so
// both stay within 2·2·80·u ≈ 2e-5 (worst case, per layer) of the exact
// value; 1e-4 allows for two layers and the inputs' sizes.
func TestLSTMTransformerEncoderMatchesGraph(t *testing.T) {
	m, _ := tinyTEncLSTM(t, "lstm-copy", 0, 2, 2)
	v := tinyVocab()
	tc := DefaultConfig()
	tc.Dim, tc.Layers, tc.Heads, tc.MLPDim, tc.Dropout = 4, 2, 2, 6, 0
	// The run's vocabulary orders the source tokens differently and lacks
	// "c", so embeddings are matched by token.
	tv := &Vocab{Source: append(append([]string(nil), specials...), "x", "b", "a", "z"), Target: v.Target}
	tv.index()
	tc.SrcVocab, tc.TgtVocab = len(tv.Source), len(tv.Target)
	tr, err := NewTransformer(tc, 9)
	if err != nil {
		t.Fatal(err)
	}
	found, err := m.InitEncoder(tr, tv, v)
	if err != nil {
		t.Fatal(err)
	}
	if found != len(specials)+3 {
		t.Errorf("found %d source tokens, want %d", found, len(specials)+3)
	}
	// Source ids of the run for a b x (and no c): 6 5 4.
	src := []int{6, 5, 4, 0, 4, 6, 0, 0}
	own := []int{4, 5, 7, 0, 7, 4, 0, 0}
	want, err := tr.Encode(src, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cpuEngineLSTM(t, m).Encode(own, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	D := 4
	for b := 0; b < 2; b++ {
		for j := 0; j < got.SrcLen[b]; j++ {
			for i := 0; i < D; i++ {
				k := (b*4+j)*D + i
				if math.Abs(float64(got.Data[k]-want.Data[k])) > 1e-4 {
					t.Fatalf("memory [%d, %d, %d]: LSTM encoder %v, Transformer %v", b, j, i, got.Data[k], want.Data[k])
				}
			}
		}
	}
}

func TestLSTMInitEncoderErrors(t *testing.T) {
	v := tinyVocab()
	good := DefaultConfig()
	good.Dim, good.Layers, good.Heads, good.MLPDim, good.Dropout = 4, 2, 2, 6, 0
	good.SrcVocab, good.TgtVocab = len(v.Source), len(v.Target)
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) *LSTM
		edit  func(*Config)
		want  string
	}{
		{"ok", nil, func(c *Config) {}, ""},
		{"layers", nil, func(c *Config) { c.Layers = 3 }, "3 layers"},
		{"heads", nil, func(c *Config) { c.Heads = 4 }, "4 heads"},
		{"mlp", nil, func(c *Config) { c.MLPDim = 8 }, "mlp_dim 8"},
		{"dim", nil, func(c *Config) { c.Dim = 8 }, "dim 8"},
		{"relative", nil, func(c *Config) { c.Variant, c.Relative = "relative", true }, "relative attention"},
		{"double I/O", nil, func(c *Config) { c.IOEncoder = IODouble }, "I/O examples apart"},
		{"lstm encoder", func(t *testing.T) *LSTM { m, _ := tinyLSTM(t, "lstm-copy", 0); return m }, func(c *Config) {}, `encoder is ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *LSTM
			if tc.model != nil {
				m = tc.model(t)
			} else {
				m, _ = tinyTEncLSTM(t, "lstm-copy", 0, 2, 2)
			}
			c := good
			tc.edit(&c)
			tr, err := NewTransformer(c, 1)
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.InitEncoder(tr, v, v)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestEncoderConfigValidate(t *testing.T) {
	base := LSTMDefaultConfig("lstm-copy")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"lstm", func(c *Config) {}, ""},
		{"empty means lstm", func(c *Config) { c.Encoder = "" }, ""},
		{"transformer", func(c *Config) { c.Encoder = EncoderTransformer }, ""},
		{"unknown", func(c *Config) { c.Encoder = "gru" }, `unknown encoder "gru"`},
		{"heads do not divide dim", func(c *Config) { c.Encoder, c.EncoderHeads = EncoderTransformer, 5 }, "encoder_heads 5"},
		{"no heads", func(c *Config) { c.Encoder, c.EncoderHeads = EncoderTransformer, 0 }, "encoder_heads 0"},
		{"negative layers", func(c *Config) { c.Encoder, c.EncoderLayers = EncoderTransformer, -1 }, "encoder_layers -1"},
		{"relative", func(c *Config) { c.Encoder, c.Relative = EncoderTransformer, true }, "relative"},
		{"transformer model", func(c *Config) { c.Variant, c.Heads, c.Encoder = "transformer", 4, EncoderTransformer }, "LSTM models only"},
		{"transformer model, lstm", func(c *Config) { c.Variant, c.Heads = "transformer", 4 }, "LSTM models only"},
		{"transformer model, empty", func(c *Config) { c.Variant, c.Heads, c.Encoder = "transformer", 4, "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
