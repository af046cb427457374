package models

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/robustfill"
)

// Special token ids, the same in source and target vocabularies.
const (
	// PadID fills batches; it is never attended to and never scored.
	PadID = 0
	// StartID opens the decoder input. It doubles as the separator after
	// each program part: Shi et al.'s public code reuses the start token as
	// the separator (reference notes, "Separator"), so x_0 of the decoder
	// input counts as a separator for the decompositional masks (§4).
	StartID = 1
	// EOSID ends a target sequence.
	EOSID = 2
	// UnkID stands for a token unseen in training.
	UnkID = 3
	// SepID is the separator: the start token, see StartID.
	SepID = StartID
)

// specials are the reserved tokens, in id order.
var specials = []string{"<pad>", "<start>", "<eos>", "<unk>"}

// NumSpecials is the number of reserved ids: a pretrained model's token k
// is id NumSpecials + k.
const NumSpecials = 4

// Subword is a pretrained model's tokenizer, working in compbench's ids
// (models/pretrained.Tokenizer).
type Subword interface {
	// IDs splits text into the model's pieces, as ids (UnkID for the
	// model's unknown token).
	IDs(text string) ([]int, error)
	// Text joins ids back into text.
	Text(ids []int) string
}

// SepToken is how separators are written in text (compbench masks --target).
const SepToken = "SEP"

// Vocab maps tokens to ids for the source and the target side.
type Vocab struct {
	// Source lists source tokens by id; ids 0-3 are the specials.
	Source []string `json:"source"`
	// Target lists target tokens by id; ids 0-3 are the specials.
	Target []string `json:"target"`
	// Pretrained is the folder of the pretrained model whose tokenizer
	// splits text (then Source and Target are its pieces after the
	// specials, the same on both sides); empty for word vocabularies.
	Pretrained string `json:"pretrained,omitempty"`

	src map[string]int
	tgt map[string]int
	sub Subword
}

// SubwordVocab is the vocabulary of a pretrained model in folder dir:
// the specials, then its pieces by model id, split and joined by sub.
func SubwordVocab(dir string, pieces []string, sub Subword) *Vocab {
	all := append(append([]string(nil), specials...), pieces...)
	v := &Vocab{Source: all, Target: all, Pretrained: dir, sub: sub}
	v.index()
	return v
}

// SetSubword gives a vocabulary read from a pretrained run its tokenizer.
func (v *Vocab) SetSubword(sub Subword) { v.sub = sub }

// Subword is the tokenizer of a pretrained vocabulary (nil otherwise).
func (v *Vocab) Subword() Subword { return v.sub }

// sourceIDs are the ids of a record's source after prefix, with the
// unknown ones counted.
func (v *Vocab) sourceIDs(r *data.Record, prefix string) ([]int, int, error) {
	if v.Pretrained == "" {
		ids, unk := v.SourceIDs(append(Tokens(prefix), SourceTokens(r)...))
		return ids, unk, nil
	}
	text := r.Input
	if text == "" && len(r.Inputs) > 0 {
		text = robustfill.EncodeIO(r.Inputs, r.Outputs)
	}
	return v.subwordIDs(prefix + text)
}

// TextIDs are the target ids of text, with the unknown ones counted.
func (v *Vocab) TextIDs(text string) ([]int, int, error) {
	if v.Pretrained == "" {
		ids, unk := v.TargetIDs(Tokens(text))
		return ids, unk, nil
	}
	return v.subwordIDs(text)
}

func (v *Vocab) subwordIDs(text string) ([]int, int, error) {
	if v.sub == nil {
		return nil, 0, fmt.Errorf("vocab: the tokenizer of %s is not loaded", v.Pretrained)
	}
	ids, err := v.sub.IDs(text)
	unk := 0
	for _, id := range ids {
		if id == UnkID {
			unk++
		}
	}
	return ids, unk, err
}

// Tokens splits a string on whitespace, the tokenization of every
// compbench text dataset (outputs are tokens separated by single spaces).
func Tokens(s string) []string { return strings.Fields(s) }

// BuildVocab collects the tokens of recs, sorted, after the specials.
func BuildVocab(recs []data.Record) *Vocab {
	src, tgt := map[string]bool{}, map[string]bool{}
	for i := range recs {
		for _, t := range SourceTokens(&recs[i]) {
			src[t] = true
		}
		for _, t := range Tokens(recs[i].Output) {
			tgt[t] = true
		}
	}
	v := &Vocab{Source: withSpecials(src), Target: withSpecials(tgt)}
	v.index()
	return v
}

func withSpecials(set map[string]bool) []string {
	out := append([]string(nil), specials...)
	keys := make([]string, 0, len(set))
	for k := range set {
		if !isSpecial(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return append(out, keys...)
}

func isSpecial(t string) bool {
	for _, s := range specials {
		if s == t {
			return true
		}
	}
	return false
}

func (v *Vocab) index() {
	v.src = make(map[string]int, len(v.Source))
	for i, t := range v.Source {
		v.src[t] = i
	}
	v.tgt = make(map[string]int, len(v.Target))
	for i, t := range v.Target {
		v.tgt[t] = i
	}
}

// NewVocab is the vocabulary of the token lists source and target, each
// starting with the special tokens (Validate checks them).
func NewVocab(source, target []string) *Vocab {
	v := &Vocab{Source: source, Target: target}
	v.index()
	return v
}

// Indexed reports whether v maps tokens to ids: true for the vocabularies
// BuildVocab, NewVocab and ReadVocab make.
func (v *Vocab) Indexed() bool { return v.src != nil }

// SourceID is the id of the source token t, and whether v has it.
func (v *Vocab) SourceID(t string) (id int, ok bool) {
	id, ok = v.src[t]
	return id, ok
}

// Validate checks that both sides start with the specials and have no
// duplicates.
func (v *Vocab) Validate() error {
	for side, toks := range map[string][]string{"source": v.Source, "target": v.Target} {
		if len(toks) < len(specials) {
			return fmt.Errorf("vocab: %s side has %d tokens, want at least %d", side, len(toks), len(specials))
		}
		seen := map[string]bool{}
		for i, t := range toks {
			if i < len(specials) && t != specials[i] {
				return fmt.Errorf("vocab: %s token %d is %q, want %q", side, i, t, specials[i])
			}
			// A pretrained model's pieces may repeat the specials' names.
			if seen[t] && v.Pretrained == "" {
				return fmt.Errorf("vocab: %s token %q appears twice", side, t)
			}
			seen[t] = true
		}
	}
	return nil
}

// SourceIDs maps source tokens to ids; unknown tokens become UnkID and are
// counted.
func (v *Vocab) SourceIDs(toks []string) (ids []int, unknown int) {
	return lookup(v.src, toks)
}

// TargetIDs maps target tokens to ids, counting unknown ones.
func (v *Vocab) TargetIDs(toks []string) (ids []int, unknown int) {
	return lookup(v.tgt, toks)
}

func lookup(m map[string]int, toks []string) ([]int, int) {
	ids := make([]int, len(toks))
	unk := 0
	for i, t := range toks {
		id, ok := m[t]
		if !ok {
			id = UnkID
			unk++
		}
		ids[i] = id
	}
	return ids, unk
}

// Detok turns predicted target ids into the output string: it stops at EOS
// and drops padding, start and separators, which are removed before
// evaluation (Shi et al. §4).
func (v *Vocab) Detok(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id == EOSID {
			break
		}
		if id == PadID || id == StartID || id < 0 || id >= len(v.Target) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.Target[id])
	}
	return b.String()
}

// SourceTokens is the model input of a record: its Input, or for a record
// with I/O examples but no Input, the tokens of the flat source the
// RobustFill generator would have written for them (robustfill.EncodeIO:
// "in -> out | in -> out", one token per character, with SPACE, PIPE and
// U+XXXX escapes), so the double I/O encoder splits both alike at "|" and
// "->".
func SourceTokens(r *data.Record) []string {
	if r.Input != "" || len(r.Inputs) == 0 {
		return Tokens(r.Input)
	}
	return Tokens(robustfill.EncodeIO(r.Inputs, r.Outputs))
}

// ReadVocab loads vocab.json.
func ReadVocab(path string) (*Vocab, error) {
	b, err := data.ReadFileLimit(path, data.VocabFile)
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	var v Vocab
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("vocab %s: %w", path, err)
	}
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v.index()
	return &v, nil
}

// MarshalIndent gives the bytes of vocab.json.
func (v *Vocab) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DetokSource is Detok over the extended vocabulary of copying models:
// id len(Target)+j is the source token at position j of src (the record's
// SourceTokens). For other models it equals Detok.
func (v *Vocab) DetokSource(ids []int, src []string) string {
	if v.sub != nil {
		for i, id := range ids {
			if id == EOSID {
				ids = ids[:i]
				break
			}
		}
		return v.sub.Text(ids)
	}
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
