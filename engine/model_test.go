package engine_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"compbench/models"
	"compbench/train"
)

// TestEngineModelSeq2Seq: the engine-backed model answers Loss, Encode and
// Logits as the Transformer does, and decodes the same outputs.
func TestEngineModelSeq2Seq(t *testing.T) {
	m, bt := tiny(t, "sep-to-sep-and-last")
	em, err := models.NewEngineModel(m, backends[0].be)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	var _ models.Seq2Seq = em
	for _, train := range []bool{false, true} {
		want, err := m.Loss(bt, train, 0.1, 2)
		if err != nil {
			t.Fatal(err)
		}
		wantGrads := append([]float32(nil), m.Params().Grads[0]...)
		got, err := em.Loss(bt, train, 0.1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("loss (train %v): engine %v, model %v", train, got, want)
		}
		if train {
			compare(t, "grad 0", wantGrads, m.Params().Grads[0], 0, 0)
		}
	}
	ex := make([]models.Example, len(bt.Rows))
	for i, r := range bt.Rows {
		ex[i] = *r
	}
	for _, beam := range []int{1, 3} {
		o := train.DecodeOptions{Beam: beam, MaxLen: 6, Batch: 4, Width: 4}
		want, err := train.Decode(context.Background(), m, ex, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := train.Decode(context.Background(), em, ex, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Both decode incrementally from cached keys and values, the
		// engine through its kernels: same tokens, scores within float32
		// rounding.
		for i := range want {
			for k, h := range want[i].Hyps {
				g := got[i].Hyps[k]
				if !reflect.DeepEqual(g.IDs, h.IDs) || math.Abs(g.Score-h.Score) > 1e-5 {
					t.Errorf("beam %d, row %d, hypothesis %d: engine %+v, model %+v", beam, i, k, g, h)
				}
			}
		}
	}
}
