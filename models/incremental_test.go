package models

import (
	"math"
	"testing"
)

// TestIncrementalMatchesGraph: step-by-step decoding with caches gives the
// logits of the decoder graph run over the whole prefix.
func TestIncrementalMatchesGraph(t *testing.T) {
	for _, variant := range []string{"transformer", "relative", "sep-to-last", "sep-to-sep-and-last"} {
		t.Run(variant, func(t *testing.T) {
			m, _, ex := tinyModel(t, variant, tinyRecords())
			bt := MakeBatch([]*Example{&ex[0], &ex[1], &ex[2]}, 4, 4)
			mem, err := m.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			const steps = 6
			st, err := m.StartDecode(mem, steps)
			if err != nil {
				t.Fatal(err)
			}
			// Feed a fixed prefix with separators: START w SEP j j SEP.
			seq := []int{StartID, 4, SepID, 5, 5, SepID}
			decIn := make([]int, bt.B*8)
			for pos := 0; pos < steps; pos++ {
				toks := make([]int, bt.B)
				for b := range toks {
					toks[b] = seq[pos]
					decIn[b*8+pos] = seq[pos]
				}
				got, err := st.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				want, err := m.Logits(mem, decIn, 8, pos)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-4 {
						t.Fatalf("step %d: logit %d is %v, the graph gives %v", pos, i, got[i], want[i])
					}
				}
			}
		})
	}
}
