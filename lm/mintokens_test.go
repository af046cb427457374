package lm

import (
	"strings"
	"testing"
)

// TestMinTokensIsALowerBound: the bound score uses to refuse over-long
// records without tokenizing them never exceeds the real count.
func TestMinTokensIsALowerBound(t *testing.T) {
	tok, err := LoadTokenizer("testdata/gpt2-tiny")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "a", "jump twice", strings.Repeat("the ", 200), strings.Repeat("-", 500),
		strings.Repeat("x", 300), "héllo wörld 日本", EndOfText + " after " + EndOfText} {
		t.Run(s[:min(len(s), 12)], func(t *testing.T) {
			ids, err := tok.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := tok.MinTokens(s); got > len(ids) || (len(s) > 0 && got < 1) {
				t.Errorf("MinTokens = %d, Encode gives %d tokens", got, len(ids))
			}
		})
	}
}
