package transformer

import (
	"math"
	"testing"

	"compbench/models"
)

// The mask matrices themselves are pinned in package attention; these tests
// pin how models turns decoder input ids into attention's flags.

// TestDecoderBias: SepID marks separators, positions from each row's
// length on are padding (whatever their ids), and the additive bias is 0
// where attention is allowed and -Inf elsewhere.
func TestDecoderBias(t *testing.T) {
	const w, j = 10, 11
	// Row 0: <start> WALK SEP JUMP JUMP SEP. Row 1: <start> WALK SEP, then
	// two positions beyond its length holding ids that are not padding.
	ids := []int{models.StartID, w, models.SepID, j, j, models.SepID, models.StartID, w, models.SepID, models.SepID, j, models.PadID}
	cases := []struct {
		kind string
		want [2]string
	}{
		{"causal", [2]string{"100000 110000 111000 111100 111110 111111", "100000 110000 111000 000000 000000 000000"}},
		{"sep-to-last", [2]string{"100000 110000 011000 001100 001110 010011", "100000 110000 011000 000000 000000 000000"}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			dst := make([]float32, 2*6*6)
			if err := fillDecBias(dst, c.kind, ids, 2, 6, []int{6, 3}); err != nil {
				t.Fatal(err)
			}
			for b := range 2 {
				if got := biasString(dst[b*36:(b+1)*36], 6); got != c.want[b] {
					t.Errorf("row %d: got  %s\nwant %s", b, got, c.want[b])
				}
			}
		})
	}
	if err := fillDecBias(make([]float32, 36), "nope", ids[:6], 1, 6, []int{6}); err == nil {
		t.Error("unknown mask accepted")
	}
}

// TestDecoderMaskRow: the incremental decoder's row is the last row of the
// full mask.
func TestDecoderMaskRow(t *testing.T) {
	x := []int{models.StartID, 10, models.SepID, 11, 11, models.SepID}
	for _, kind := range []string{"causal", "sep-full", "sep-to-sep-and-last", "sep-to-last"} {
		full, err := decoderAllowed(kind, x, len(x))
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= len(x); n++ {
			row, err := decoderMaskRow(kind, x[:n])
			if err != nil {
				t.Fatal(err)
			}
			for j := range row {
				if row[j] != full[n-1][j] {
					t.Errorf("%s: prefix %d, key %d: row %v, full mask %v", kind, n, j, row[j], full[n-1][j])
				}
			}
		}
	}
}

func biasString(v []float32, T int) string {
	s := make([]byte, 0, T*(T+1))
	for i := range T {
		if i > 0 {
			s = append(s, ' ')
		}
		for j := range T {
			if math.IsInf(float64(v[i*T+j]), -1) {
				s = append(s, '0')
			} else {
				s = append(s, '1')
			}
		}
	}
	return string(s)
}
