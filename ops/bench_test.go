package ops

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BenchmarkOps times each op's forward and backward run on activations of a
// Transformer training batch (2048 tokens of width 256, 8 heads of 32 keys,
// a 1000-word vocabulary), calling the ops directly as the tape machine
// does.
func BenchmarkOps(b *testing.B) {
	const n, d, v, bt, h, t = 2048, 256, 1000, 64, 8, 32
	x, dy := randT(1, 2, n, d), randT(2, 1, n, d)
	gamma, beta := randT(3, 1, d), randT(4, 1, d)
	scores, dp := randT(5, 4, bt, h, t, t), randT(6, 1, bt, h, t, t)
	mask := tensor.New(tensor.WithShape(bt, 1, t, t), tensor.Of(tensor.Float32))
	for i, m := 0, mask.Float32s(); i < len(m); i++ {
		if i%t > (i/t)%t {
			m[i] = float32(math.Inf(-1))
		}
	}
	logits := randT(7, 4, n/4, v)
	targets := make([]int, n/4)
	for i := range targets {
		targets[i] = (i * 31) % v
	}
	tg := tensor.New(tensor.WithShape(n/4), tensor.WithBacking(targets))
	table := randT(8, 1, v, d)
	ids := tensor.New(tensor.WithShape(n), tensor.WithBacking(append(append([]int(nil), targets...), make([]int, n-n/4)...)))
	src := NewDropoutSource(1)
	drop := &dropoutOp{opBase: base("Dropout", 1), p: 0.1, src: src}
	sce := &sceOp{base("SoftmaxCE", 2), 0, 0.1}
	one := G.NewF32(1)
	for _, c := range []struct {
		name string
		op   interface {
			Do(...G.Value) (G.Value, error)
		}
		in []G.Value
	}{
		{"LayerNorm", &layerNormOp{base("LayerNorm", 3), LayerNormEps}, []G.Value{x, gamma, beta}},
		{"LayerNormGradX", &layerNormGradX{base("LayerNormGradX", 3), LayerNormEps}, []G.Value{x, gamma, dy}},
		{"LayerNormGradGamma", &layerNormGradParams{base("LayerNormGradGamma", 2), LayerNormEps, true}, []G.Value{x, dy}},
		{"AttnSoftmax", &attnSoftmaxOp{opBase: base("AttnSoftmax", 2), hasMask: true}, []G.Value{scores, mask}},
		{"AttnSoftmaxGrad", &softmaxGradOp{base("AttnSoftmaxGrad", 2)}, []G.Value{scores, dp}},
		{"SoftmaxCE", sce, []G.Value{logits, tg}},
		{"SoftmaxCEGrad", &sceGradOp{base("SoftmaxCEGrad", 3), sce}, []G.Value{logits, tg, one}},
		{"Embed", &gatherOp{opBase: base("Embed", 2), v: v, d: d}, []G.Value{table, ids}},
		{"EmbedGrad", &gatherOp{opBase: base("EmbedGrad", 2), v: v, d: d, grad: true}, []G.Value{dy, ids}},
		{"Dropout", drop, []G.Value{x}},
		{"DropoutGrad", &dropoutGradOp{base("DropoutGrad", 1), drop}, []G.Value{dy}},
		{"GELU", &geluOp{base("GELU", 1), false, false}, []G.Value{x}},
		{"GELUGrad", &geluOp{base("GELUGrad", 2), true, false}, []G.Value{x, dy}},
		{"ReLU", &reluOp{base("ReLU", 1), false}, []G.Value{x}},
		{"ReLUGrad", &reluOp{base("ReLUGrad", 2), true}, []G.Value{x, dy}},
		{"Add", &addOp{base("Add", 2)}, []G.Value{x, dy}},
		{"AddBias", &addBiasOp{base("AddBias", 2)}, []G.Value{x, beta}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := c.op.Do(c.in...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("AdamStep", func(b *testing.B) {
		p, g := randT(9, 1, n, d), randT(10, 1, n, d)
		m, vv := tensor.New(tensor.WithShape(n, d), tensor.Of(tensor.Float32)), tensor.New(tensor.WithShape(n, d), tensor.Of(tensor.Float32))
		for i := 0; i < b.N; i++ {
			if err := AdamStep(p, g, m, vv, 1e-4, i+1, DefaultAdamConfig()); err != nil {
				b.Fatal(fmt.Errorf("step %d: %w", i+1, err))
			}
		}
	})
}
