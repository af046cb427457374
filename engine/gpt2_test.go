package engine_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
	"compbench/models/gpt2"
)

// TestGPT2StepMatchesTapeMachine: a GPT-2 training step's loss and
// gradients (GELU, tied embeddings through Transpose, left padding) on the
// CPU backend with BLAS products against the TapeMachine. Both make the
// same BLAS calls, so the loss and every gradient are bit-identical except
// the biases' (Σ over the N token rows of the gradient dy at the bias):
// the engine sums those in chunks of 64 rows, the same as the TapeMachine
// up to 64 rows and in another order above. Two orders of one float32 sum
// differ by at most 2γ_N Σ_r |dy_r|, which bounds them at 128 rows. The
// scoring path and the AdamW steps are checked in package models
// (TestGPT2EngineMatchesTapeMachine, TestGPT2TrainerMatchesTapeMachine).
func TestGPT2StepMatchesTapeMachine(t *testing.T) {
	cfg := gpt2.Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	for _, tc := range []struct {
		name  string
		seqs  [][]int
		first []int
	}{
		{"16 rows", [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}}, []int{1, 2}},
		{"128 rows", [][]int{{29, 1, 2, 3, 4, 5, 6, 7, 8, 9, 29}, {29, 5, 6, 29}, {29, 7, 29}, {29, 8, 9, 10, 29},
			{29, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 29}, {29, 2, 29}, {29, 3, 4, 29}, {29, 6, 29}}, []int{1, 2, 1, 3, 1, 1, 2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := gpt2.New(cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			view, err := m.TrainView(tc.seqs, tc.first)
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
			biases := 0
			for _, gn := range view.Grads {
				want := gn.Value().Data().([]float32)
				out := make([]float32, len(want))
				if err := mc.Read(gn, out); err != nil {
					t.Fatal(err)
				}
				bound, rows := rowSumBound(gn)
				if bound != nil {
					biases++
				}
				if bound == nil || rows <= 64 {
					compare(t, gn.Name(), want, out, 0, 0)
					continue
				}
				for j := range want {
					if d := math.Abs(float64(out[j] - want[j])); d > bound[j] {
						t.Errorf("%s[%d]: engine %v, TapeMachine %v, bound %.3g", gn.Name(), j, out[j], want[j], bound[j])
					}
				}
			}
			if biases == 0 {
				t.Error("no bias gradient found")
			}
		})
	}
}

// rowSumBound returns, for a bias gradient (Gorgonia's Reshape of Σ over
// the rows of dy [N, D], as the gradient of its broadcast add), the bound
// 2γ_N Σ_r |dy_rj| on the difference of two summation orders of each
// column j, γ_N = N·u/(1−N·u) with u = 2^-24, and N; nil for other
// gradients.
func rowSumBound(gn *G.Node) ([]float64, int) {
	child := func(n *G.Node) *G.Node {
		it := n.Graph().From(n.ID())
		if !it.Next() {
			return nil
		}
		return it.Node().(*G.Node)
	}
	sum := child(gn)
	if !strings.HasPrefix(fmt.Sprint(gn.Op()), "Reshape") || sum == nil || !strings.HasPrefix(fmt.Sprint(sum.Op()), "Σ") {
		return nil, 0
	}
	dyNode := child(sum)
	dy := dyNode.Value().Data().([]float32)
	n, d := dyNode.Shape()[0], dyNode.Shape()[1]
	gamma := float64(n) * 0x1p-24 / (1 - float64(n)*0x1p-24)
	bound := make([]float64, d)
	for r := 0; r < n; r++ {
		for j := 0; j < d; j++ {
			bound[j] += 2 * gamma * math.Abs(float64(dy[r*d+j]))
		}
	}
	return bound, n
}
