package engine_test

import (
	"testing"

	"compbench/models"
	"compbench/models/transformer"
	"compbench/train"
)

// TestEngineModelSeq2Seq: the engine-backed model answers Loss as the
// Transformer does, and decodes what the Transformer's graph decodes.
func TestEngineModelSeq2Seq(t *testing.T) {
	m, bt := tiny(t, "sep-to-sep-and-last")
	em, err := transformer.NewEngine(m, backends[0].be)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	var _ models.Seq2Seq = em
	for _, train := range []bool{false, true} {
		want, err := tapeModel{m}.Loss(bt, train, 0.1, 2)
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
	// Decoding: the engine's incremental decoder against the graph
	// re-run over each prefix (checkDecode).
	for _, beam := range []int{1, 3} {
		checkDecode(t, m, em, examples(bt), train.DecodeOptions{Beam: beam, MaxLen: 6, Batch: 4, Width: 4})
	}
}
