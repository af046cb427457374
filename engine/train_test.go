package engine_test

import (
	"math"
	"testing"

	"compbench/models"
	"compbench/models/transformer"
	"compbench/train"
)

// TestEngineTrainingMatchesTrainLoop: five steps of train's loop (Loss,
// ClipGlobalNorm, Adam with the warm-up schedule) and five EngineTrainer
// steps from the same seed give the same loss curve, over two batch shapes
// (two programs sharing one set of device weights).
func TestEngineTrainingMatchesTrainLoop(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			ref, _ := tiny(t, "relative-sep")
			eng, _ := tiny(t, "relative-sep")
			batches := twoShapes(t, ref)
			opt := newOracleAdam(ref.Params())
			tr, err := transformer.NewTrainer(eng, bk.be, adamCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			const clip = 0.5
			for step := 1; step <= 5; step++ {
				bt := batches[step%2]
				lr := train.LearningRate(1e-2, 3, step)
				want, err := tapeModel{ref}.Loss(bt, true, 0.1, step)
				if err != nil {
					t.Fatal(err)
				}
				wantNorm := opt.ClipGlobalNorm(clip)
				if err := opt.Step(lr); err != nil {
					t.Fatal(err)
				}
				got, norm, err := tr.Step(bt, 0.1, step, clip, lr)
				if err != nil {
					t.Fatal(err)
				}
				tol := max(bk.tol*10*float64(step), 0) // rounding differences compound over steps
				if math.Abs(got-want) > tol*math.Abs(want) || math.Abs(norm-wantNorm) > tol*wantNorm {
					t.Fatalf("step %d: engine loss %v norm %v, train loop loss %v norm %v", step, got, norm, want, wantNorm)
				}
				t.Logf("step %d: loss %.7f norm %.5f", step, got, norm)
			}
			if err := tr.Download(); err != nil {
				t.Fatal(err)
			}
			if bk.tol > 0 {
				// Weights whose gradient is zero in exact arithmetic
				// (the key biases) get Adam steps of size ~lr from
				// rounding noise alone, which differs between GEMM
				// orders: only the bit-identical backend can compare
				// weights.
				return
			}
			pr, pe := ref.Params(), eng.Params()
			for i, name := range pr.Names {
				compare(t, name, pr.Data(i), pe.Data(i), 0, 0)
			}
		})
	}
}

// twoShapes makes batches of two shapes from the test records.
func twoShapes(t *testing.T, m *transformer.Model) []*models.Batch {
	t.Helper()
	_, full := tiny(t, m.Cfg.Variant)
	rows := full.Rows
	return []*models.Batch{models.MakeBatch(rows[:2], 2, 4), models.MakeBatch(rows, 4, 8)}
}
