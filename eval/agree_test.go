package eval

import (
	"math"
	"testing"
)

// The worked example: four models, four examples with 4, 3, 2 and 0 models
// right; accuracies 3/4, 3/4, 1/2, 1/4.
func workedMatrix(t *testing.T) *Matrix {
	m, err := NewMatrix([][]bool{
		{true, true, true, false},
		{true, true, true, false},
		{true, true, false, false},
		{true, false, false, false},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAgreement(t *testing.T) {
	m := workedMatrix(t)
	acc := m.Accuracies()
	for _, tc := range []struct {
		name         string
		k            int
		rate, random float64
	}{
		// 4/4: examples 1 and 4 -> 2/4. Random: Πp + Π(1-p)
		// = .0703125 + .0234375.
		{"4/4", 4, 0.5, 0.09375},
		// 3+/4: examples 1, 2, 4. Random: P(>=3 right) .3984375 + P(>=3 wrong) .1953125.
		{"3+/4", 3, 0.75, 0.59375},
		// 2+/4 always holds with 4 models.
		{"2+/4", 2, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.Agreement(tc.k); got != tc.rate {
				t.Errorf("agreement %v want %v", got, tc.rate)
			}
			if got := RandomAgreement(acc, tc.k); math.Abs(got-tc.random) > 1e-12 {
				t.Errorf("random agreement %v want %v", got, tc.random)
			}
		})
	}
	for i, want := range []int8{1, 1, -1, 0} {
		if got := m.Majority(i); got != want {
			t.Errorf("majority(%d) = %d want %d", i, got, want)
		}
	}
	if _, err := NewMatrix([][]bool{{true}, {true, false}}); err == nil {
		t.Fatal("ragged columns accepted")
	}
	// Two models with accuracies .8 and .6 agree by chance .8*.6 + .2*.4.
	if got := RandomAgreement([]float64{0.8, 0.6}, 2); math.Abs(got-0.56) > 1e-12 {
		t.Fatalf("two-model random agreement %v", got)
	}
}

func TestAUC(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{0.9, 0.8, 0.7, 0.6}, []bool{true, true, false, false}, 1},
		{"reversed", []float64{0.1, 0.2, 0.7, 0.6}, []bool{true, true, false, false}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []bool{true, false, true, false}, 0.5},
		// pairs: (.9,.5)=1 (.9,.1)=1 (.5,.5)=1/2 (.5,.1)=1 -> 3.5/4
		{"one tie", []float64{0.9, 0.5, 0.5, 0.1}, []bool{true, true, false, false}, 0.875},
		{"interleaved", []float64{0.8, 0.6, 0.4}, []bool{true, false, true}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, roc, err := AUC(tc.scores, tc.labels)
			if err != nil || math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("AUC %v err %v want %v", got, err, tc.want)
			}
			last := roc[len(roc)-1]
			if roc[0].FPR != 0 || roc[0].TPR != 0 || last.FPR != 1 || last.TPR != 1 {
				t.Fatalf("ROC endpoints %v %v", roc[0], last)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		labels []bool
	}{
		{"all positive", []bool{true, true}},
		{"all negative", []bool{false, false}},
		{"empty", []bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := AUC(make([]float64, len(tc.labels)), tc.labels); err == nil {
				t.Fatal("one class accepted")
			}
		})
	}
	if _, _, err := AUC([]float64{math.NaN(), 2}, []bool{true, false}); err == nil {
		t.Fatal("NaN accepted")
	}
}

func TestPearson(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
		err  bool
	}{
		{"linear", []float64{1, 2, 3}, []float64{2, 4, 6}, 1, false},
		{"anti", []float64{1, 2, 3}, []float64{3, 2, 1}, -1, false},
		{"hand", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8, false},
		{"constant x", []float64{1, 1, 1}, []float64{1, 2, 3}, 0, true},
		{"constant y", []float64{1, 2, 3}, []float64{5, 5, 5}, 0, true},
		{"lengths differ", []float64{1, 2, 3}, []float64{1, 2}, 0, true},
		{"one point", []float64{1}, []float64{1}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Pearson(tc.x, tc.y)
			if (err != nil) != tc.err || math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("got %v err %v", got, err)
			}
		})
	}
}

// TestAccuracies uses a matrix with more examples than models, so dividing
// by the model count instead of the example count shows.
func TestAccuracies(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols [][]bool
		want []float64
	}{
		// 2 models, 4 examples: 3/4 and 1/4 right.
		{"4 examples, 2 models", [][]bool{{true, true, true, false}, {false, false, true, false}}, []float64{0.75, 0.25}},
		// 3 models, 1 example.
		{"1 example, 3 models", [][]bool{{true}, {false}, {true}}, []float64{1, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMatrix(tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Accuracies()
			if len(got) != len(tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
			for j := range got {
				if math.Abs(got[j]-tc.want[j]) > 1e-12 {
					t.Fatalf("got %v want %v", got, tc.want)
				}
			}
		})
	}
}
