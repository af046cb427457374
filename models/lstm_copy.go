package models

import (
	"strings"

	"compbench/data"
)

// Copies reports whether the --model name copies from the source, so
// that its targets use the extended vocabulary (see LSTM).
func Copies(variant string) bool { return variant == "lstm-copy" }

// copyIDs rewrites the UNK entries of tgt (as targetIDs made them from r)
// to the extended id len(v.Target)+j of the first source position j <
// maxSrc holding the same token; it returns the number of tokens left
// unknown.
func copyIDs(v *Vocab, r *data.Record, tgt []int, sep bool, maxSrc int) int {
	src := SourceTokens(r)
	if len(src) > maxSrc {
		src = src[:maxSrc]
	}
	var toks []string // aligned with tgt: "" for separators and EOS
	if !sep {
		toks = Tokens(r.Output)
	} else {
		parts := r.Parts
		if len(parts) == 0 {
			parts = []string{r.Output}
		}
		for _, p := range parts {
			toks = append(append(toks, Tokens(p)...), "")
		}
	}
	unk := 0
	for i, tok := range toks {
		if i >= len(tgt) || tgt[i] != UnkID || tok == "" {
			continue
		}
		j := indexOf(src, tok)
		if j < 0 {
			unk++
			continue
		}
		tgt[i] = len(v.Target) + j
	}
	return unk
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// DetokSource is Detok over the extended vocabulary of copying models:
// id len(Target)+j is the source token at position j of src (the record's
// SourceTokens). For other models it equals Detok.
func (v *Vocab) DetokSource(ids []int, src []string) string {
	var b strings.Builder
	for _, id := range ids {
		if id == EOSID {
			break
		}
		tok := ""
		switch {
		case id == PadID || id == StartID || id < 0:
		case id < len(v.Target):
			tok = v.Target[id]
		case id-len(v.Target) < len(src):
			tok = src[id-len(v.Target)]
		}
		if tok == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tok)
	}
	return b.String()
}
