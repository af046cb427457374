package engine_test

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/models"
)

// TestGPT2StepMatchesTapeMachine: a GPT-2 training step's loss and
// gradients (GELU, tied embeddings through Transpose, left padding).
func TestGPT2StepMatchesTapeMachine(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			cfg := models.GPT2Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
			m, err := models.NewGPT2(cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			o, err := m.NewOptimizer(models.GPT2AdamW())
			if err != nil {
				t.Fatal(err)
			}
			seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}}
			first := []int{1, 2}
			snap := m.Snapshot()
			want, err := m.TrainStep(o, seqs, first, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			m.Restore(snap)
			view, err := m.TrainView(seqs, first)
			if err != nil {
				t.Fatal(err)
			}
			p, err := engine.Compile(append(G.Nodes{view.Out}, view.Grads...), engine.Options{Inputs: view.Inputs})
			if err != nil {
				t.Fatal(err)
			}
			mc, err := engine.NewMachine(p, bk.be)
			if err != nil {
				t.Fatal(err)
			}
			if err := mc.Run(); err != nil {
				t.Fatal(err)
			}
			got, _ := mc.Scalar(view.Out)
			compare(t, "loss", []float32{float32(want)}, []float32{got}, bk.tol, 0)
			var floor float64
			for _, gn := range view.Grads {
				for _, v := range gn.Value().Data().([]float32) {
					floor = max(floor, math.Abs(float64(v)))
				}
			}
			for _, gn := range view.Grads {
				w := gn.Value().Data().([]float32)
				out := make([]float32, len(w))
				if err := mc.Read(gn, out); err != nil {
					t.Fatal(err)
				}
				compare(t, gn.Name(), w, out, bk.tol, floor)
			}
		})
	}
}
