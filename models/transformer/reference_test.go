package transformer

import (
	"testing"

	"compbench/engine"
	"compbench/internal/reftest"
	"compbench/models"
)

// The Transformer variants and the Universal Transformer against float64
// PyTorch references (scripts/baseline_reference.py, written independently
// from the papers): from the same weights, a padded batch's logits, loss
// and every parameter's gradient. Here on the CPU backends; on the GPU
// backend in reference_cuda_test.go.

// referenceDir holds the fixture: cases.json and a safetensors file per case.
const referenceDir = "testdata/reference"

// referenceBound is the rounding bound (reftest.Bound) of a training step
// of a model of configuration c on bt. Stages on the longest path forward:
// the embedding 1; per attention sublayer 8 (LayerNorm's moments and
// normalisation 2, projection, scores, softmax, weighted values, output
// projection, residual); per feed-forward sublayer 5 (LayerNorm 2, two
// products, residual); the two final LayerNorms 4, the output projection
// 1 and the loss 2 (log-sum-exp, mean). A Universal Transformer step adds
// its timing signal 1 and, with ACT, 4 (halting product, sigmoid, step
// weight, accumulation). The backward pass retraces them (twice the
// depth), and adds up a shared layer's gradients over the steps (1 per
// step and stack). The longest sums: the width, feed-forward size and
// vocabulary, and over rows for the weight gradients (B·S, B·T); with
// relative attention a bucket's gradient sums query-key pairs (S², T²).
func referenceBound(c Config, bt *models.Batch) reftest.Bound {
	enc, dec, steps := 8+5, 8+8+5, c.Layers
	extra := 0
	if c.UTSteps > 0 {
		steps, extra = c.UTSteps, 1
		if c.ACT {
			extra += 4
		}
	}
	forward := 1 + steps*(enc+extra) + steps*(dec+extra) + 4 + 1 + 2
	depth := 2 * forward
	if c.UTSteps > 0 {
		depth += 2 * steps
	}
	n := max(c.Dim, c.MLPDim, c.TgtVocab, bt.B*bt.S, bt.B*bt.T)
	if c.Relative {
		n = max(n, bt.S*bt.S, bt.T*bt.T)
	}
	return reftest.Bound{N: n, Depth: depth}
}

// TestTransformerReference runs every case on the CPU backend as the
// commands use it (BLAS products) and on its kernel references (the
// program the GPU runs).
func TestTransformerReference(t *testing.T) {
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
	m, err := New(cfg, 1)
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
	b := referenceBound(m.Cfg, bt)

	// The training graph: its loss carries ACT's ponder cost, and its
	// gradients are the objective's.
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

	// The logits of every real position, from the decoding graph over the
	// whole decoder input: a real position sees only itself and earlier
	// ones, so it computes what the training graph does.
	mem, err := e.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.DecodeView(mem, bt.DecIn, bt.T, bt.T-1)
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := e.Output(v) // [B*T, V]
	if err != nil {
		t.Fatal(err)
	}
	want, err := fx.Float64s("logits")
	if err != nil {
		t.Fatal(err)
	}
	b.Check(t, "logits", reftest.Real(all, bt, m.Cfg.TgtVocab), want, 0)
}
