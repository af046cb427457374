package lstm

import (
	"testing"

	"compbench/engine"
	"compbench/internal/reftest"
	"compbench/models"
	"compbench/vecmath"
)

// lstm-attention, lstm-copy and lstm-copy over the Transformer encoder
// against float64 PyTorch references (scripts/baseline_reference.py,
// written independently from the papers and docs/lstm.md): from the same
// weights, a padded batch's logits, attention weights, copy gates, loss and
// every parameter's gradient. Here on the CPU backends; on the GPU backend
// in reference_cuda_test.go.

// referenceDir holds the fixture: cases.json and a safetensors file per case.
const referenceDir = "testdata/reference"

// referenceBound is the rounding bound (reftest.Bound) of a training step
// of m on bt. Stages on the longest path forward: the embedding 1; per
// LSTM step 4 (the recurrent product, the gates' σ and tanh, the cell
// update, h = o·tanh(c)) over the longest source (the BiLSTM) and target,
// per layer; or, for the Transformer encoder, 13 per layer (as in the
// Transformer's bound: attention 8, feed-forward 5) and its final
// LayerNorm 2; the attention 6 (query, keys, tanh, the v product, softmax,
// context); the output 1; the loss 2; the copy mixture 4 (gate product,
// σ, mixture, log). The backward pass retraces them (twice the depth). The
// longest sums: a cell's inputs [x; h] and its 4H gates (backward), the
// output's and the copy gate's inputs, the vocabulary, the source, and over
// rows for the weight gradients (B·S, B·T).
func referenceBound(m *Model, bt *models.Batch) reftest.Bound {
	c, H, W := m.Cfg, m.Cfg.Dim, m.memW
	forward := 1 + 4*c.Layers*bt.T + 6 + 1 + 2
	if m.tenc != nil {
		forward += 13*c.EncoderLayerCount() + 2
	} else {
		forward += 4 * c.Layers * bt.S
	}
	if m.Copy {
		forward += 4
	}
	n := max(3*H, 4*H, 2*H+W, c.TgtVocab, bt.S, bt.B*bt.S, bt.B*bt.T)
	if m.tenc != nil {
		n = max(n, c.MLPDim)
	}
	return reftest.Bound{N: n, Depth: 2 * forward}
}

// TestLSTMReference runs every case on the CPU backend as the commands use
// it (BLAS products) and on its kernel references (the program the GPU
// runs).
func TestLSTMReference(t *testing.T) {
	for _, be := range []struct {
		name string
		be   engine.Backend
	}{{"cpu", &engine.CPU{BLAS: true}}, {"cpu-kernels", &engine.CPU{}}} {
		t.Run(be.name, func(t *testing.T) { referenceCases(t, be.be) })
	}
}

// referenceCases checks every case of the fixture on be.
func referenceCases(t *testing.T, be engine.Backend) {
	cases, err := reftest.ReadCases(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { referenceCase(t, be, &c) })
	}
}

func referenceCase(t *testing.T, be engine.Backend, c *reftest.Case) {
	cfg, err := c.ModelConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.Vocab == nil {
		t.Fatal("case without its vocabulary")
	}
	v := models.NewVocab(c.Vocab.Source, c.Vocab.Target)
	m, err := New(cfg, 1, v)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := c.Open(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fx.LoadParams(m.Params()); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bt := c.Batch()
	b := referenceBound(m, bt)

	obj, err := e.Loss(bt, true, c.Smoothing, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Check(t, "objective", []float32{float32(obj)}, []float64{c.Objective}, 0)
	fx.CheckGrads(t, m.Params(), b)
	loss, err := e.Loss(bt, false, c.Smoothing, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Check(t, "loss", []float32{float32(loss)}, []float64{c.Loss}, 0)

	outs := map[string][]float32{}
	outs["logits"], outs["attention"], outs["p_gen"] = passOutputs(t, e, bt)
	for _, name := range []string{"logits", "attention", "p_gen"} {
		if name == "p_gen" && !m.Copy {
			continue
		}
		want, err := fx.Float64s(name)
		if err != nil {
			t.Fatal(err)
		}
		b.Check(t, name, outs[name], want, 0)
	}
}

// passOutputs runs the forward pass of a training step (Engine.pass up to
// the loss) and returns, at bt's real target positions in row order, the
// logits [tokens, V], the attention weights [tokens, S] and, for
// lstm-copy, the copy gates p_gen [tokens].
func passOutputs(t *testing.T, e *Engine, bt *models.Batch) (logits, att, pgen []float32) {
	t.Helper()
	e.work.reset()
	f := &devPass{e: e, a: &e.work, ints: &e.ints, B: bt.B, S: bt.S, T: bt.T}
	for _, step := range []func() error{func() error { return f.upload(bt) }, f.encode, f.decode} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	R, V, S := f.out.R, e.m.Cfg.TgtVocab, bt.S
	down := func(buf engine.Buf, n int) []float32 {
		tm := make([]float32, R*n) // [T*B, n] time-major
		if err := e.b.Download(tm, buf); err != nil {
			t.Fatal(err)
		}
		bm := make([]float32, R*n) // [B*T, n]
		for ti := 0; ti < bt.T; ti++ {
			for b := 0; b < bt.B; b++ {
				copy(bm[(b*bt.T+ti)*n:(b*bt.T+ti+1)*n], tm[(ti*bt.B+b)*n:(ti*bt.B+b+1)*n])
			}
		}
		return reftest.Real(bm, bt, n)
	}
	logits, att = down(f.out.logits, V), down(f.out.att, S)
	if e.m.Copy {
		pgen = down(f.out.zg, 1)
		for i, z := range pgen {
			pgen[i] = vecmath.Sigmoid(z) // as the engine's decoding turns it into p_gen
		}
	}
	return logits, att, pgen
}
