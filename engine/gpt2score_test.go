package engine_test

import (
	"math"
	"testing"

	"compbench/models"
)

// TestGPT2EngineScores: GPT-2 token log-probabilities on the engine agree
// with the model's own scoring (whose output projection runs in chunks
// through BLAS: same sums, blocked differently, so within 1e-5).
func TestGPT2EngineScores(t *testing.T) {
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			cfg := models.GPT2Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
			m, err := models.NewGPT2(cfg, 9)
			if err != nil {
				t.Fatal(err)
			}
			seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}, {7, 8}}
			first := []int{1, 2, 1}
			want, err := m.TokenLogProbs(seqs, first, 4)
			if err != nil {
				t.Fatal(err)
			}
			e, err := models.NewGPT2Engine(m, bk.be)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			for rep := 0; rep < 2; rep++ { // the second call reuses the program
				got, err := e.TokenLogProbs(seqs, first, 4)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if len(got[i]) != len(want[i]) {
						t.Fatalf("sequence %d: %d scores, want %d", i, len(got[i]), len(want[i]))
					}
					for k := range want[i] {
						if math.Abs(got[i][k]-want[i][k]) > 1e-5 {
							t.Fatalf("sequence %d token %d: engine %v, model %v", i, k, got[i][k], want[i][k])
						}
					}
				}
			}
			if _, err := e.TokenLogProbs([][]int{{1, 30}}, []int{1}, 1); err == nil {
				t.Error("a token id outside the vocabulary was accepted")
			}
		})
	}
}
