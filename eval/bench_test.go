package eval

import (
	"testing"

	"compbench/data"
)

// BenchmarkAgreement1M: agreement and random agreement over 1,000,000
// predictions (250,000 examples x 4 models); target under 5 s.
func BenchmarkAgreement1M(b *testing.B) {
	r := data.NewRand(1)
	cols := make([][]bool, 4)
	for j := range cols {
		cols[j] = make([]bool, 250000)
		for i := range cols[j] {
			cols[j][i] = r.Float64() < 0.7
		}
	}
	for b.Loop() {
		m, err := NewMatrix(cols)
		if err != nil {
			b.Fatal(err)
		}
		acc := m.Accuracies()
		for k := 1; k <= 4; k++ {
			m.Agreement(k)
			RandomAgreement(acc, k)
		}
	}
}

// BenchmarkAUC1M: ROC AUC over 1,000,000 scored examples with many ties;
// target under 5 s.
func BenchmarkAUC1M(b *testing.B) {
	r := data.NewRand(2)
	scores := make([]float64, 1000000)
	labels := make([]bool, len(scores))
	for i := range scores {
		scores[i] = float64(r.IntN(1000)) / 1000
		labels[i] = r.Float64() < scores[i]
	}
	for b.Loop() {
		if _, _, err := AUC(scores, labels); err != nil {
			b.Fatal(err)
		}
	}
}
