package engine_test

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/models"
)

// TestGPT2StepMatchesTapeMachine: a GPT-2 training step's loss and
// gradients (GELU, tied embeddings through Transpose, left padding) on the
// CPU backend with BLAS products are the TapeMachine's, bit for bit: both
// make the same BLAS calls, and at 2 x 8 token rows the bias gradients'
// chunked row sums (64 rows a chunk) add in the TapeMachine's order. The
// scoring path and the AdamW steps are checked in package models
// (TestGPT2EngineMatchesTapeMachine, TestGPT2TrainerMatchesTapeMachine).
func TestGPT2StepMatchesTapeMachine(t *testing.T) {
	cfg := models.GPT2Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	m, err := models.NewGPT2(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	view, err := m.TrainView([][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}}, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Compile(append(G.Nodes{view.Out}, view.Grads...), engine.Options{Inputs: view.Inputs})
	if err != nil {
		t.Fatal(err)
	}
	mc, err := engine.NewMachine(p, &engine.CPU{BLAS: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.Run(); err != nil {
		t.Fatal(err)
	}
	if err := G.NewTapeMachine(view.Out.Graph()).RunAll(); err != nil {
		t.Fatal(err)
	}
	got, _ := mc.Scalar(view.Out)
	compare(t, "loss", []float32{view.Out.Value().Data().(float32)}, []float32{got}, 0, 0)
	for _, gn := range view.Grads {
		want := gn.Value().Data().([]float32)
		out := make([]float32, len(want))
		if err := mc.Read(gn, out); err != nil {
			t.Fatal(err)
		}
		compare(t, gn.Name(), want, out, 0, 0)
	}
}
