package robustfill

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Anything that parses as program JSON re-encodes to JSON and tokens that
// parse back to the same program, and runs without panicking.
func FuzzParseJSON(f *testing.F) {
	for _, c := range encodingCases {
		f.Add(c.json, "Ud 9:25,JV3 Obb")
	}
	f.Add(`[["SubStr",1,-1]]`, "")
	f.Add(`[["GetSpan","CHAR",-5,"END","&",5,"START"]]`, "a&b&c")
	f.Add(`[[`, "x")
	f.Fuzz(func(t *testing.T, js, input string) {
		p, err := ParseJSON([]byte(js))
		if err != nil {
			return
		}
		q, err := ParseJSON(p.AppendJSON(nil))
		if err != nil || !q.Equal(p) {
			t.Fatalf("JSON round trip of %s: %v", js, err)
		}
		r, err := ParseTokens(p.Tokens())
		if err != nil || !r.Equal(p) {
			t.Fatalf("token round trip of %s: %v", js, err)
		}
		if _, err := p.Run(input); err != nil {
			t.Fatalf("run %s: %v", js, err)
		}
	})
}

// Anything that parses as tokens renders back to tokens that parse to the
// same program; a canonical rendering is reproduced byte for byte.
func FuzzParseTokens(f *testing.F) {
	for _, c := range encodingCases {
		if c.tokens != "" {
			f.Add(c.tokens, "Jacob Ethan James")
		}
	}
	f.Add("Compose ToCase LOWER GetUpto SPACE Trim", " A b ")
	f.Add("SubStr -1 1 | |", "")
	f.Fuzz(func(t *testing.T, toks, input string) {
		p, err := ParseTokens(toks)
		if err != nil {
			return
		}
		canon := p.Tokens()
		q, err := ParseTokens(canon)
		if err != nil || !q.Equal(p) {
			t.Fatalf("round trip of %q: %v", toks, err)
		}
		if q.Tokens() != canon {
			t.Fatalf("rendering not stable: %q vs %q", q.Tokens(), canon)
		}
		r, err := ParseJSON(p.AppendJSON(nil))
		if err != nil || !r.Equal(p) {
			t.Fatalf("JSON of %q: %v", toks, err)
		}
		if _, err := p.Run(input); err != nil {
			t.Fatalf("run %q: %v", toks, err)
		}
	})
}

// Every list of strings survives the I/O encoding.
func FuzzIOEncoding(f *testing.F) {
	f.Add("a b", "A", "c|d", "")
	f.Add("", "", "->", "U+0041")
	f.Fuzz(func(t *testing.T, i1, o1, i2, o2 string) {
		in, out := []string{i1, i2}, []string{o1, o2}
		for _, s := range []string{i1, o1, i2, o2} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
				return // invalid UTF-8 is written as U+FFFD, by design
			}
		}
		enc := EncodeIO(in, out)
		gi, gout, err := DecodeIO(enc)
		if err != nil {
			t.Fatalf("decode %q: %v", enc, err)
		}
		if len(gi) != 2 || gi[0] != i1 || gi[1] != i2 || gout[0] != o1 || gout[1] != o2 {
			t.Fatalf("%q %q -> %q -> %q %q", in, out, enc, gi, gout)
		}
	})
}
