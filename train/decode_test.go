package train

import (
	"context"
	"runtime"
	"testing"

	"compbench/models"
)

// TestDecodeBatchAboveExamples: a --batch larger than the examples decodes
// them as a batch of their own number (batches are padded to their row
// limit), with the same hypotheses and without allocating the padding.
func TestDecodeBatchAboveExamples(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps = 20
	dir := t.TempDir()
	train(t, cfg, Options{Dir: dir})
	r, err := OpenRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, _ := models.Encode(r.Vocab, tinyData(), models.EncodeOptions{MaxSrc: 8, MaxTgt: 10})
	m := bind(t, r)
	decode := func(batch int) ([]Decoded, uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d, err := Decode(context.Background(), m, ex, DecodeOptions{Beam: 1, MaxLen: 10, Batch: batch, Width: 4}, nil)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return d, after.TotalAlloc - before.TotalAlloc
	}
	want, _ := decode(len(ex))
	for _, batch := range []int{len(ex) + 1, 1 << 20} {
		got, alloc := decode(batch)
		for i := range want {
			if a, b := r.Vocab.Detok(got[i].Hyps[0].IDs), r.Vocab.Detok(want[i].Hyps[0].IDs); a != b {
				t.Errorf("batch %d, example %d: %q, want %q", batch, i, a, b)
			}
		}
		// A padded batch of 2^20 rows would hold at least its source
		// memory, 2^20 × 8 positions × dim 16 × 4 bytes = 512 MiB.
		if alloc > 64<<20 {
			t.Errorf("batch %d on %d examples allocated %d MiB", batch, len(ex), alloc>>20)
		}
	}
}
