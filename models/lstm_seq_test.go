package models

import (
	"testing"

	"compbench/data"
)

// TestLSTMSeqGradient checks runLSTM's batched backward pass (input
// projection, weight gradients and input gradients over all steps at once)
// against central differences, both directions, with and without padding.
func TestLSTMSeqGradient(t *testing.T) {
	const n, in, H, T = 3, 4, 5, 4
	rng := data.NewRand(11)
	rnd := func(k int, s float64) []float32 {
		out := make([]float32, k)
		for i := range out {
			out[i] = float32((2*rng.Float64() - 1) * s)
		}
		return out
	}
	w, b := rnd((in+H)*4*H, 0.5), rnd(4*H, 0.5)
	xs := make([][]float32, T)
	wh := make([][]float32, T) // loss weights on each step's h
	for t := range xs {
		xs[t], wh[t] = rnd(n*in, 1), rnd(n*H, 1)
	}
	padded := [][]float32{{1, 1, 1}, {1, 0, 1}, {1, 0, 0}, {1, 0, 0}}
	for _, tc := range []struct {
		name  string
		rev   bool
		masks [][]float32
	}{{"forward", false, nil}, {"reverse", true, nil}, {"forward padded", false, padded}, {"reverse padded", true, padded}} {
		t.Run(tc.name, func(t *testing.T) {
			loss := func() float64 {
				hs, _ := runLSTM(w, b, in, H, xs, tc.masks, tc.rev)
				var s float64
				for t := range hs {
					for i, v := range hs[t] {
						s += float64(wh[t][i] * v)
					}
				}
				return s
			}
			_, run := runLSTM(w, b, in, H, xs, tc.masks, tc.rev)
			dW, dB := make([]float32, len(w)), make([]float32, len(b))
			dxs := run.backward(w, dW, dB, wh)
			fdCheck(t, "W", w, dW, loss, 1)
			fdCheck(t, "b", b, dB, loss, 1)
			for s := range xs {
				fdCheck(t, "x", xs[s], dxs[s], loss, 1)
			}
		})
	}
}

// TestLSTMAttUMax checks that recomputing the attention's tanh in the
// backward pass (activations over attUMax) gives the kept ones' gradients.
func TestLSTMAttUMax(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy"} {
		t.Run(variant, func(t *testing.T) {
			m, bt := tinyLSTM(t, variant, 0)
			grads := func() [][]float32 {
				if _, err := m.Loss(bt, true, 0.1, 1); err != nil {
					t.Fatal(err)
				}
				out := make([][]float32, len(m.p.Grads))
				for i, g := range m.p.Grads {
					out[i] = append([]float32(nil), g...)
				}
				return out
			}
			kept := grads()
			old := attUMax
			attUMax = 0
			defer func() { attUMax = old }()
			again := grads()
			for i := range kept {
				for j := range kept[i] {
					if d := kept[i][j] - again[i][j]; d > 1e-6 || d < -1e-6 {
						t.Fatalf("%s[%d]: %g kept, %g recomputed", m.p.Names[i], j, kept[i][j], again[i][j])
					}
				}
			}
		})
	}
}
