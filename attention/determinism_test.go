package attention

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Building and running the same block twice from the same seeds gives
// bit-identical gradients, and re-running one machine (which reuses the
// ops' output buffers) gives the same gradients again.
func TestBlockDeterminism(t *testing.T) {
	run := func(times int) [][]float32 {
		g, grads, _ := blockGraph(t, 3, 6, 16, 2, 32)
		vm := G.NewTapeMachine(g)
		defer vm.Close()
		var out [][]float32
		for range times {
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			out = out[:0]
			for _, gr := range grads {
				out = append(out, append([]float32(nil), gr.Value().(*tensor.Dense).Float32s()...))
			}
			vm.Reset()
		}
		return out
	}
	a, b := run(1), run(3)
	for i := range a {
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("gradient %d[%d]: %g vs %g", i, j, a[i][j], b[i][j])
			}
		}
	}
}
