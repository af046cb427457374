package lm

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"compbench/data"
)

// normalText draws n bytes or more of text of the kinds records hold:
// words, contractions, numbers, punctuation, accented and CJK letters,
// runs of spaces, tabs and newlines, and end-of-text markers.
func normalText(rng *rand.Rand, n int) string {
	pieces := []string{"jump", "twice", "and", "walk", "left", "it's", "we'll", "42", "3.14", ",", ".", "!?",
		"(x)", "héllo", "wörld", "日本語", "  ", "\t", "\n", " - ", "--", "\"quoted\"", EndOfText, "<b>", "x_y", "'s"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
		if rng.IntN(3) > 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// TestTailKeepsLastTokens: the suffix Tail keeps tokenizes into exactly
// the last tokens of the whole text, at least keep of them (the argument
// in truncate.go, checked on GPT-2's vocabulary and merges).
func TestTailKeepsLastTokens(t *testing.T) {
	tok, _ := loadFixture(t)
	rng := rand.New(rand.NewPCG(7, 11))
	cut := 0
	for i := 0; i < 24; i++ {
		keep := []int{1, 2, 4, 8}[i%4]
		s := normalText(rng, 600+rng.IntN(4000))
		t.Run("", func(t *testing.T) {
			tail, err := tok.Tail(s, keep)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(s, tail) {
				t.Fatal("not a suffix")
			}
			if tail == s {
				return
			}
			cut++
			whole, err := tok.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			part, err := tok.Encode(tail)
			if err != nil {
				t.Fatal(err)
			}
			if len(part) < keep || !reflect.DeepEqual(part, whole[len(whole)-len(part):]) {
				t.Fatalf("keep %d: the suffix of %d bytes gives %d tokens, not the last ones of the %d of the text", keep, len(tail), len(part), len(whole))
			}
		})
	}
	if cut < 12 {
		t.Errorf("only %d of 24 texts were cut", cut)
	}
}

// TestTruncationUnchanged: score --truncate gives the same ids and first
// scored token whether EncodeRecords cuts the text first or tokenizes all
// of it, for long queries and for long prompts. A context of 4 tokens
// makes texts of a few kB long enough to cut (GPT-2's longest token is 128
// bytes).
func TestTruncationUnchanged(t *testing.T) {
	tok, _ := loadFixture(t)
	whole := *tok
	whole.longest = 1 << 30 // Tail never cuts
	rng := rand.New(rand.NewPCG(3, 5))
	var recs []data.Record
	for i := 0; i < 12; i++ {
		recs = append(recs, data.Record{ID: string(rune('a' + i)), Input: normalText(rng, 10+rng.IntN(6000))})
	}
	for _, tc := range []struct {
		name, template string
		ctx            int
	}{{"long queries", DefaultTemplate, 4}, {"long prompts", "{input} then: {query}", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultScoreConfig()
			cfg.Truncate, cfg.Template = true, tc.template
			if tc.name == "long prompts" {
				cfg.Field = "output"
				for i := range recs {
					recs[i].Output = "short answer"
				}
			}
			got, n, err := EncodeRecords(tok, recs, cfg, tc.ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, m, err := EncodeRecords(&whole, recs, cfg, tc.ctx)
			if err != nil {
				t.Fatal(err)
			}
			cut := 0
			for i := range recs {
				if tail, _ := tok.Tail(recs[i].Input, tc.ctx); tail != recs[i].Input {
					cut++
				}
			}
			if cut < 2 {
				t.Errorf("only %d records are long enough to cut", cut)
			}
			if n != m || !reflect.DeepEqual(got, want) {
				t.Fatalf("cut first: %d truncated, else %d; encodings equal: %v", n, m, reflect.DeepEqual(got, want))
			}
		})
	}
}

// TestTailRefusals: a long text Tail cannot cut exactly is an error, not
// a tokenization of all of it; a long record truncates fast.
func TestTailRefusals(t *testing.T) {
	tok, _ := loadFixture(t)
	if _, err := tok.Tail(strings.Repeat("x", 1<<20), 32); err == nil || !strings.Contains(err.Error(), "no word boundary") {
		t.Errorf("no boundary: %v", err)
	}
	other := *tok
	other.cuttable = false
	if _, err := other.Tail(strings.Repeat("jump ", 1<<18), 32); err == nil || !strings.Contains(err.Error(), "not GPT-2's byte-level") {
		t.Errorf("another pre-tokenizer: %v", err)
	}
	start := time.Now()
	recs := []data.Record{{ID: "big", Input: strings.Repeat("jump twice and walk left ", 200_000)}} // 5 MB
	cfg := DefaultScoreConfig()
	cfg.Truncate = true
	ex, n, err := EncodeRecords(tok, recs, cfg, nPositions)
	if err != nil || n != 1 || len(ex[0].Ids) != nPositions {
		t.Fatalf("%d truncated, %v", n, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a 5 MB record took %s", d)
	}
}
