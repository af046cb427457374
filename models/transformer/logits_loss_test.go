package transformer

import (
	"math"
	"testing"

	"compbench/kernels"
	"compbench/models"
)

// teacherForcedLosses decodes bt's targets through m.Logits (the decoding
// path) and returns, over the rows that are not padding, Σ −log p(target),
// Σ_k −log p(k)/V (label smoothing's uniform term; left 0 without
// uniform) and the number of rows: a training loss with smoothing ε is
// ((1−ε)·nll + ε·uniform)/n.
func teacherForcedLosses(t *testing.T, m models.Seq2Seq, bt *models.Batch, uniform bool) (nll, unif float64, n int) {
	t.Helper()
	mem, err := m.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	for pos := 0; pos < bt.T; pos++ {
		lg, err := m.Logits(mem, bt.DecIn, bt.T, pos)
		if err != nil {
			t.Fatal(err)
		}
		v := len(lg) / bt.B
		for b := 0; b < bt.B; b++ {
			y := bt.Tgt[b*bt.T+pos]
			if y == models.PadID {
				continue
			}
			row := append([]float32(nil), lg[b*v:(b+1)*v]...)
			kernels.SoftmaxRowRef(row)
			nll -= math.Log(float64(row[y]))
			if uniform {
				for _, p := range row {
					unif -= math.Log(float64(p)) / float64(v)
				}
			}
			n++
		}
	}
	return nll, unif, n
}
