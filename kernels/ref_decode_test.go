package kernels

import (
	"math"
	"testing"
)

func TestDecodeRefs(t *testing.T) {
	x := []float32{
		1, 3, 3, 2, // ties at 1 and 2: the first wins
		5, 9, 0, 5, // 1 is skipped: 0 and 3 tie
		0, 0, 0, 0, // all equal: init (2) stays
	}
	t.Run("argmax", func(t *testing.T) {
		out := make([]int32, 3)
		ArgmaxRef(3, 4, x, 2, Skip{1, -1}, out)
		if want := []int32{2, 0, 2}; out[0] != want[0] || out[1] != want[1] || out[2] != want[2] {
			t.Fatalf("argmax = %v, want %v", out, want)
		}
	})
	t.Run("topk", func(t *testing.T) {
		vals, idx := make([]float32, 9), make([]int32, 9)
		TopKRef(3, 4, 3, x, Skip{1, 2}, vals, idx)
		want := []int32{3, 0, -1, 0, 3, -1, 0, 3, -1}
		for i := range want {
			if idx[i] != want[i] {
				t.Fatalf("topk ids = %v, want %v", idx, want)
			}
		}
		if !math.IsInf(float64(vals[2]), -1) {
			t.Fatalf("padding value %g, want -Inf", vals[2])
		}
	})
	t.Run("logsoftmax", func(t *testing.T) {
		y := make([]float32, 12)
		LogSoftmaxRef(3, 4, x, y)
		lp := make([]float64, 3)
		LogProbAtRef(3, 4, x, []int32{1, 2, 3}, lp)
		for r := 0; r < 3; r++ {
			var s float64
			for j := 0; j < 4; j++ {
				s += math.Exp(float64(y[r*4+j]))
			}
			if math.Abs(s-1) > 1e-6 {
				t.Fatalf("row %d: Σ exp = %g", r, s)
			}
		}
		if math.Abs(lp[2]-math.Log(0.25)) > 1e-12 || math.Abs(lp[0]-float64(y[1])) > 1e-6 {
			t.Fatalf("logprob %v, log-softmax %v", lp, y)
		}
	})
}
