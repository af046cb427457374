package models

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecoderMask checks the three decompositional masks (Shi et al. §4)
// on the decoder input <start> WALK SEP JUMP JUMP SEP, written by hand
// from the definition.
func TestDecoderMask(t *testing.T) {
	const w, j = 10, 11
	x := []int{StartID, w, SepID, j, j, SepID}
	cases := []struct{ kind, want string }{
		{"causal", "100000 110000 111000 111100 111110 111111"},
		{"sep-full", "100000 110000 111000 001100 001110 111111"},
		{"sep-to-last", "100000 110000 011000 001100 001110 010011"},
		{"sep-to-sep-and-last", "100000 110000 111000 001100 001110 111011"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			m, err := DecoderMask(c.kind, x, len(x))
			if err != nil {
				t.Fatal(err)
			}
			if got := maskString(m, len(x)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	t.Run("padding", func(t *testing.T) {
		m, _ := DecoderMask("sep-to-last", append(x[:3:3], PadID, PadID), 3)
		if got, want := maskString(m, 5), "10000 11000 01100 00000 00000"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		if _, err := DecoderMask("nope", x, len(x)); err == nil {
			t.Error("no error for an unknown mask")
		}
	})
}

func maskString(m []bool, T int) string {
	var rows []string
	for i := 0; i < T; i++ {
		var b strings.Builder
		for j := 0; j < T; j++ {
			if m[i*T+j] {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		rows = append(rows, b.String())
	}
	return strings.Join(rows, " ")
}

// TestRelBucket checks T5 buckets (32 buckets, maximum distance 128).
func TestRelBucket(t *testing.T) {
	cases := []struct {
		rel  int
		bi   bool
		want int
	}{
		{0, true, 0}, {-1, true, 1}, {1, true, 17}, {-7, true, 7}, {-8, true, 8},
		{-128, true, 15}, {-1000, true, 15}, {1000, true, 31},
		{5, false, 0}, {-15, false, 15}, {-16, false, 16}, {-20, false, 17}, {-500, false, 31},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%v", c.rel, c.bi), func(t *testing.T) {
			if got := RelBucket(c.rel, c.bi, 32, 128); got != c.want {
				t.Errorf("RelBucket(%d, %v) = %d, want %d", c.rel, c.bi, got, c.want)
			}
		})
	}
}
