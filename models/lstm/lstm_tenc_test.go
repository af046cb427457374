package lstm

import (
	"math"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/models/transformer"
)

// tinyTEncLSTM is tinyLSTM with layers decoder layers and a Transformer
// encoder of tenc layers with two heads.
func tinyTEncLSTM(t *testing.T, variant string, dropout float64, layers, tenc int) (*Model, *models.Batch) {
	t.Helper()
	m, bt := tinyLSTMWith(t, variant, dropout, func(c *models.Config) {
		c.Layers, c.Encoder, c.EncoderLayers, c.EncoderHeads, c.MLPDim = layers, models.EncoderTransformer, tenc, 2, 6
	})
	// Unit-scale embeddings keep the ReLU inputs of these tiny weights
	// away from the kink, which central differences would straddle.
	for i := range m.p.Data(m.srcEmb) {
		m.p.Data(m.srcEmb)[i] *= 10
	}
	return m, bt
}

// TestLSTMTransformerEncoderMatchesGraph: with a Transformer run's encoder
// loaded, the LSTM's encoder program (the Transformer's encoder graph,
// compiled by package engine, on CPU{BLAS: true}) computes the memory the
// Transformer computes on Gorgonia's TapeMachine, bit for bit, at every
// position, padding included. It also checks the loading: embeddings go
// by token, tokens the run lacks keep theirs.
func TestLSTMTransformerEncoderMatchesGraph(t *testing.T) {
	m, _ := tinyTEncLSTM(t, "lstm-copy", 0, 2, 2)
	v := tinyVocab()
	tc := models.DefaultConfig()
	tc.Dim, tc.Layers, tc.Heads, tc.MLPDim, tc.Dropout = 4, 2, 2, 6, 0
	// The run's vocabulary orders the source tokens differently and lacks
	// "c", so embeddings are matched by token.
	tv := models.NewVocab(append(specialTokens(), "x", "b", "a", "z"), v.Target)
	tc.SrcVocab, tc.TgtVocab = len(tv.Source), len(tv.Target)
	tr, err := transformer.New(tc, 9)
	if err != nil {
		t.Fatal(err)
	}
	cID := 6 // "c" in the model's vocabulary
	before := append([]float32(nil), m.p.Data(m.srcEmb)[cID*4:(cID+1)*4]...)
	found, err := m.InitEncoder(tr, tv, v)
	if err != nil {
		t.Fatal(err)
	}
	if found != len(specialTokens())+3 {
		t.Errorf("found %d source tokens, want %d", found, len(specialTokens())+3)
	}
	if got := m.p.Data(m.srcEmb)[cID*4 : (cID+1)*4]; !slices.Equal(got, before) {
		t.Errorf("embedding of a token the run lacks changed: %v, was %v", got, before)
	}
	// Source ids of the run for a b x (and no c): 6 5 4. The third row is
	// padding only.
	src := []int{6, 5, 4, 0, 4, 6, 0, 0, 0, 0, 0, 0}
	own := []int{4, 5, 7, 0, 7, 4, 0, 0, 0, 0, 0, 0}
	view, _, err := tr.EncodeView(src, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range view.Inputs {
		if err := G.Let(n, view.Values[k]); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(view.Out.Graph())
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	want := view.Out.Value().Data().([]float32)
	got, err := cpuEngineLSTM(t, m).Encode(own, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != len(want) {
		t.Fatalf("memory of %d floats, Transformer %d", len(got.Data), len(want))
	}
	for k := range got.Data {
		if math.Float32bits(got.Data[k]) != math.Float32bits(want[k]) {
			t.Fatalf("memory [%d, %d]: LSTM encoder %v, Transformer %v", k/4, k%4, got.Data[k], want[k])
		}
	}
}

// TestLSTMTransformerEncoderGradientMatchesGraph: in a training step with
// dropout, the LSTM's encoder program (forward part, then the vector-
// Jacobian product of the memory's gradient dMem that the LSTM program
// produced) gives the memory and the encoder's parameter gradients that
// Gorgonia's TapeMachine gives for the Transformer's encoder graph with
// the same weights, seed and step, differentiated with G.Grad of
// Σ(mem ⊙ dMem): bit for bit on CPU{BLAS: true}. The same dropout masks
// in the forward and the backward part are part of what it checks: a
// backward part with other masks gives other gradients.
func TestLSTMTransformerEncoderGradientMatchesGraph(t *testing.T) {
	const step = 7
	m, bt := tinyTEncLSTM(t, "lstm-attention", 0.3, 1, 2)
	v := tinyVocab()
	tc := models.DefaultConfig()
	tc.Dim, tc.Layers, tc.Heads, tc.MLPDim, tc.Dropout = 4, 2, 2, 6, 0.3
	tc.SrcVocab, tc.TgtVocab = len(v.Source), len(v.Target)
	tr, err := transformer.New(tc, m.seed) // the LSTM's seed: the same masks
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.InitEncoder(tr, v, v); err != nil {
		t.Fatal(err)
	}
	e := cpuEngineLSTM(t, m)
	if _, err := e.Loss(bt, true, 0, step); err != nil {
		t.Fatal(err)
	}
	tp := e.tprogs[tencKey{train: true, b: bt.B, s: bt.S}]
	if tp == nil || tp.drop == nil {
		t.Fatal("no training program with dropout")
	}
	B, S, D := bt.B, bt.S, tc.Dim
	mem, dMem := make([]float32, B*S*D), make([]float32, B*S*D)
	if err := tp.mc.Read(tp.mem, mem); err != nil {
		t.Fatal(err)
	}
	if err := tp.mc.Read(tp.dMem, dMem); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(dMem, make([]float32, len(dMem))) {
		t.Fatal("the memory's gradient is zero")
	}

	// The oracle: the Transformer's graph on the TapeMachine.
	b := tr.EncoderGraph(true)
	b.Dropout().SetStep(step)
	srcLen := rowLengths(bt.Src, B, S)
	bias := make([]float32, B*S*S)
	transformer.FillPadBias(bias, B, S, S, srcLen, srcLen)
	pos := make([]float32, B*S*D)
	transformer.FillPos(pos, B, S, D)
	in := func(name string, val any, shape ...int) *G.Node {
		dt := tensor.Float32
		if _, ids := val.([]int); ids {
			dt = tensor.Int
		}
		n := b.Input(name, dt, shape...)
		if err := G.Let(n, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(val))); err != nil {
			t.Fatal(err)
		}
		return n
	}
	out, err := b.Encode(in("src", append([]int(nil), bt.Src...), B*S), in("src_pos", pos, B*S, D), B, S, in("enc_bias", bias, B, 1, S, S))
	if err != nil {
		t.Fatal(err)
	}
	cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, in("mem_grad", dMem, B*S, D)))))
	var wrt G.Nodes
	var idx []int
	for i := range tr.Params().Names {
		if n, ok := b.Param(i); ok {
			wrt, idx = append(wrt, n), append(idx, i)
		}
	}
	grads, err := G.Grad(cost, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(b.Graph())
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for k, x := range out.Value().Data().([]float32) {
		if math.Float32bits(x) != math.Float32bits(mem[k]) {
			t.Fatalf("memory [%d, %d]: engine %v, graph %v", k/D, k%D, mem[k], x)
		}
	}
	for k, g := range grads {
		name := tr.Params().Names[idx[k]]
		j, ok := m.p.Index(name)
		if !ok {
			t.Fatalf("the LSTM has no tensor %q", name)
		}
		want := g.Value().Data().([]float32) // src_emb too: one vocabulary
		for i, w := range want {
			if math.Float32bits(w) != math.Float32bits(m.p.Grads[j][i]) {
				t.Fatalf("gradient of %s [%d]: engine %v, graph %v", name, i, m.p.Grads[j][i], w)
			}
		}
	}
}

func TestLSTMInitEncoderErrors(t *testing.T) {
	v := tinyVocab()
	good := models.DefaultConfig()
	good.Dim, good.Layers, good.Heads, good.MLPDim, good.Dropout = 4, 2, 2, 6, 0
	good.SrcVocab, good.TgtVocab = len(v.Source), len(v.Target)
	for _, tc := range []struct {
		name  string
		model func(t *testing.T) *Model
		edit  func(*models.Config)
		want  string
	}{
		{"ok", nil, func(c *models.Config) {}, ""},
		{"layers", nil, func(c *models.Config) { c.Layers = 3 }, "3 layers"},
		{"heads", nil, func(c *models.Config) { c.Heads = 4 }, "4 heads"},
		{"mlp", nil, func(c *models.Config) { c.MLPDim = 8 }, "mlp_dim 8"},
		{"dim", nil, func(c *models.Config) { c.Dim = 8 }, "dim 8"},
		{"relative", nil, func(c *models.Config) { c.Variant, c.Relative = "relative", true }, "relative attention"},
		{"double I/O", nil, func(c *models.Config) { c.IOEncoder = models.IODouble }, "I/O examples apart"},
		{"lstm encoder", func(t *testing.T) *Model { m, _ := tinyLSTM(t, "lstm-copy", 0); return m }, func(c *models.Config) {}, `encoder is ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *Model
			if tc.model != nil {
				m = tc.model(t)
			} else {
				m, _ = tinyTEncLSTM(t, "lstm-copy", 0, 2, 2)
			}
			c := good
			tc.edit(&c)
			tr, err := transformer.New(c, 1)
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
	base := DefaultConfig("lstm-copy")
	for _, tc := range []struct {
		name string
		edit func(*models.Config)
		want string
	}{
		{"lstm", func(c *models.Config) {}, ""},
		{"empty means lstm", func(c *models.Config) { c.Encoder = "" }, ""},
		{"transformer", func(c *models.Config) { c.Encoder = models.EncoderTransformer }, ""},
		{"unknown", func(c *models.Config) { c.Encoder = "gru" }, `unknown encoder "gru"`},
		{"heads do not divide dim", func(c *models.Config) { c.Encoder, c.EncoderHeads = models.EncoderTransformer, 5 }, "encoder_heads 5"},
		{"no heads", func(c *models.Config) { c.Encoder, c.EncoderHeads = models.EncoderTransformer, 0 }, "encoder_heads 0"},
		{"negative layers", func(c *models.Config) { c.Encoder, c.EncoderLayers = models.EncoderTransformer, -1 }, "encoder_layers -1"},
		{"relative", func(c *models.Config) { c.Encoder, c.Relative = models.EncoderTransformer, true }, "relative"},
		{"transformer model", func(c *models.Config) { c.Variant, c.Heads, c.Encoder = "transformer", 4, models.EncoderTransformer }, "LSTM models only"},
		{"transformer model, lstm", func(c *models.Config) { c.Variant, c.Heads = "transformer", 4 }, "LSTM models only"},
		{"transformer model, empty", func(c *models.Config) { c.Variant, c.Heads, c.Encoder = "transformer", 4, "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			err := c.Validate() // the shared fields, then the family's
			if lc := ConfigOf(c); err == nil && models.IsLSTM(c.Variant) {
				err = lc.Validate()
			}
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
