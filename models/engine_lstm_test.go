package models

import (
	"math"
	"testing"

	"compbench/engine"
	"compbench/ops"
)

// engineLSTMCases are the models the engine path is checked on: both
// variants, with and without dropout (masks drawn from the same streams),
// amplified weights (sharp attention, saturated gates), one layer, a copy
// target whose source token occurs twice, and the Transformer encoder
// (tenc: its layers; 2 heads). The batch has a row shorter than the
// longest and an all-padding row.
var engineLSTMCases = []struct {
	name, variant string
	dropout       float64
	layers        int
	amplified     bool
	repeated      bool
	tenc          int
}{
	{"attention", "lstm-attention", 0, 2, false, false, 0},
	{"attention/dropout", "lstm-attention", 0.3, 2, false, false, 0},
	{"attention/amplified/1 layer", "lstm-attention", 0, 1, true, false, 0},
	{"copy", "lstm-copy", 0, 2, false, false, 0},
	{"copy/dropout", "lstm-copy", 0.3, 2, false, false, 0},
	{"copy/amplified/repeated source", "lstm-copy", 0.2, 2, true, true, 0},
	{"attention/transformer encoder", "lstm-attention", 0, 1, false, false, 2},
	{"attention/transformer encoder/dropout", "lstm-attention", 0.3, 2, false, false, 2},
	{"copy/transformer encoder/amplified", "lstm-copy", 0, 1, true, true, 1},
	{"copy/transformer encoder/dropout", "lstm-copy", 0.2, 2, false, false, 2},
}

func engineLSTMCase(t *testing.T, i int) (*LSTM, *Batch) {
	t.Helper()
	tc := engineLSTMCases[i]
	m, bt := tinyLSTMWith(t, tc.variant, tc.dropout, func(c *Config) {
		c.Dim, c.Layers = 6, tc.layers
		if tc.tenc > 0 {
			c.Encoder, c.EncoderLayers, c.EncoderHeads, c.MLPDim = EncoderTransformer, tc.tenc, 2, 10
		}
	})
	if tc.repeated {
		bt = repeatedSourceBatch(m)
	}
	if tc.amplified {
		amplify(m)
	}
	return m, bt
}

// cpuEngineLSTM puts m on the engine's CPU backend for the test.
func cpuEngineLSTM(t *testing.T, m *LSTM) *EngineLSTM {
	t.Helper()
	e, err := NewEngineLSTM(m, leakCheckedCPU(t, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// leakCheckedCPU returns an engine CPU backend that fails the test if any
// buffer it allocated is still allocated when the test ends, after the
// model's Close (a deferred call, or a cleanup registered later).
func leakCheckedCPU(t *testing.T, blas bool) *engine.CPU {
	t.Helper()
	be := &engine.CPU{BLAS: blas}
	t.Cleanup(func() {
		if n := be.Live(); n != 0 {
			t.Errorf("%d engine buffers still allocated after the model was closed", n)
		}
	})
	return be
}

// closeTo reports whether got is within tol of want, relative to the
// larger of scale and |want|.
func closeTo(got, want, scale, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(scale, math.Abs(want))
}

func maxAbs(xs []float32) float64 {
	big := 0.0
	for _, x := range xs {
		big = max(big, math.Abs(float64(x)))
	}
	return big
}

// TestEngineLSTMLossAndGradients: the engine's training pass on the CPU
// backend gives the CPU model's loss and every gradient, within float
// tolerance (the products are GEMMs there, loops here).
func TestEngineLSTMLossAndGradients(t *testing.T) {
	for i, tc := range engineLSTMCases {
		t.Run(tc.name, func(t *testing.T) {
			m, bt := engineLSTMCase(t, i)
			e := cpuEngineLSTM(t, m)
			for _, train := range []bool{false, true} {
				const eps, step = 0.1, 7
				want, err := m.Loss(bt, train, eps, step)
				if err != nil {
					t.Fatal(err)
				}
				wantGrads := snapshotGrads(m.Params())
				got, err := e.Loss(bt, train, eps, step)
				if err != nil {
					t.Fatal(err)
				}
				if !closeTo(got, want, 0, 1e-5) {
					t.Fatalf("train %v: loss %v, CPU model %v", train, got, want)
				}
				if !train {
					continue
				}
				// Scale: the tensor's largest gradient, or a thousandth of
				// the model's, for tensors whose gradients are nearly zero
				// (the attention at initialisation).
				p, top := m.Params(), 0.0
				for _, g := range wantGrads {
					top = max(top, maxAbs(g))
				}
				for k, n := range p.Names {
					scale := max(maxAbs(wantGrads[k]), 1e-3*top)
					for j, g := range p.Grads[k] {
						if !closeTo(float64(g), float64(wantGrads[k][j]), scale, 1e-4) {
							t.Fatalf("%s[%d]: gradient %v, CPU model %v (largest %v)", n, j, g, wantGrads[k][j], scale)
						}
					}
				}
			}
		})
	}
}

// TestEngineLSTMDropoutMatters guards the comparison above: with dropout
// the loss depends on the step's masks, on both paths.
func TestEngineLSTMDropoutMatters(t *testing.T) {
	m, bt := engineLSTMCase(t, 1)
	e := cpuEngineLSTM(t, m)
	a, err := e.Loss(bt, true, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Loss(bt, true, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("steps 1 and 2 gave the same loss %v: the masks do not follow the step", a)
	}
}

// TestEngineLSTMStep: Step's loss and gradient norm are the training
// pass's, and the Adam update moves the weights.
func TestEngineLSTMStep(t *testing.T) {
	m, bt := engineLSTMCase(t, 4)
	want, err := m.Loss(bt, true, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var sq float64
	for _, g := range m.Params().Grads {
		for _, v := range g {
			sq += float64(v) * float64(v)
		}
	}
	before := snapshotGrads(&Params{Grads: func() [][]float32 {
		p := m.Params()
		out := make([][]float32, len(p.Names))
		for i := range out {
			out[i] = p.Data(i)
		}
		return out
	}()})
	e, err := NewEngineLSTMTrainer(m, leakCheckedCPU(t, true), ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	loss, norm, err := e.Step(bt, 0, 3, 0, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(loss, want, 0, 1e-5) || !closeTo(norm, math.Sqrt(sq), 0, 1e-4) {
		t.Fatalf("step: loss %v norm %v, CPU model %v and %v", loss, norm, want, math.Sqrt(sq))
	}
	if err := e.Download(); err != nil {
		t.Fatal(err)
	}
	p := m.Params()
	for i, n := range p.Names {
		moved := 0.0
		for j, w := range p.Data(i) {
			moved = max(moved, math.Abs(float64(w-before[i][j])))
		}
		if moved == 0 && maxAbs(p.Grads[i]) > 0 {
			t.Errorf("%s did not move", n)
		}
	}
}

// TestEngineLSTMDecode: the engine's memory and step logits are the CPU
// model's, through the cached step (rows swapped, as beam search does) and
// a rerun over the prefix.
func TestEngineLSTMDecode(t *testing.T) {
	for i, tc := range engineLSTMCases {
		t.Run(tc.name, func(t *testing.T) {
			m, bt := engineLSTMCase(t, i)
			e := cpuEngineLSTM(t, m)
			want, err := m.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want.Data {
				if !closeTo(float64(got.Data[j]), float64(want.Data[j]), 1, 1e-6) {
					t.Fatalf("memory[%d]: %v, CPU model %v", j, got.Data[j], want.Data[j])
				}
			}
			one, err := e.Encode(bt.Src[:bt.S], 1, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			mem := one.Repeat(2) // a memory the engine did not encode: uploaded
			const T = 4
			seqs := [][]int{
				{StartID, 4, 0, 0, StartID, 5, 0, 0},
				{StartID, 4, 0, 0, StartID, 5, 0, 0},
				{StartID, 5, 6, 0, StartID, 4, 4, 0}, // rows swapped, one token more: cached step
				{StartID, 6, 6, 5, StartID, 4, 4, 4}, // a prefix never decoded: rerun
			}
			for pos, in := range seqs {
				w, err := m.Logits(mem, in, T, pos)
				if err != nil {
					t.Fatal(err)
				}
				g, err := e.Logits(mem, in, T, pos)
				if err != nil {
					t.Fatal(err)
				}
				if len(g) != len(w) {
					t.Fatalf("pos %d: %d logits, CPU model %d", pos, len(g), len(w))
				}
				for j := range w {
					if w[j] < -1e29 && g[j] < -1e29 {
						continue // impossible extended ids
					}
					if !closeTo(float64(g[j]), float64(w[j]), 1, 1e-5) {
						t.Fatalf("pos %d logit %d: %v, CPU model %v", pos, j, g[j], w[j])
					}
				}
			}
		})
	}
}

// TestEngineLSTMNoTargets: a batch whose targets are all padding has loss
// 0 and zero gradients on both paths (no stale gradients of an earlier
// batch, no panic).
func TestEngineLSTMNoTargets(t *testing.T) {
	m, bt := engineLSTMCase(t, 4)
	e := cpuEngineLSTM(t, m)
	if _, err := e.Loss(bt, true, 0, 1); err != nil { // leaves non-zero gradients
		t.Fatal(err)
	}
	empty := *bt
	empty.Tgt = make([]int, len(bt.Tgt))
	for name, s := range map[string]Seq2Seq{"cpu": m, "engine": e} {
		l, err := s.Loss(&empty, true, 0, 2)
		if err != nil || l != 0 {
			t.Fatalf("%s: loss %v, %v; want 0", name, l, err)
		}
		for i, g := range m.Params().Grads {
			if maxAbs(g) != 0 {
				t.Fatalf("%s: %s has non-zero gradients", name, m.Params().Names[i])
			}
		}
	}
}
