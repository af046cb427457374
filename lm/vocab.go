package lm

import (
	"fmt"
	"sort"
)

// CompactVocab renumbers the BPE ids that occur in a data set as 0..n-1,
// for a language model trained from scratch (score --from-scratch).
//
// Decision: Godbole & Jia's ll_split (§3.2, App. A.2) fine-tunes a
// pretrained GPT-2 over its full 50,257-token vocabulary. A freshly
// initialised model has learnt nothing about tokens the data never uses; a
// full-size output layer would only learn to push their probability to
// zero while costing most of every training step (the [B*T, 50257] logits
// and their gradient). So the from-scratch model emits exactly the tokens
// of the data set (every fold, so a held-out example is never out of
// vocabulary) plus <|endoftext|>. Its scores keep their meaning: the
// log-probability of the same BPE tokens, normalised over the tokens the
// model can emit. Pretrained scoring keeps the full vocabulary.
//
// Ids are kept in ascending order, so GPT-2's <|endoftext|> (the largest
// id) stays the last id, the padding id the models use.
type CompactVocab struct {
	orig  []int       // compact id -> BPE id, ascending
	index map[int]int // BPE id -> compact id
}

// NewCompactVocab collects the ids of ex and eos.
func NewCompactVocab(ex []Encoded, eos int) *CompactVocab {
	seen := map[int]bool{eos: true}
	for _, e := range ex {
		for _, id := range e.Ids {
			seen[id] = true
		}
	}
	v := &CompactVocab{index: make(map[int]int, len(seen))}
	for id := range seen {
		v.orig = append(v.orig, id)
	}
	sort.Ints(v.orig)
	for c, id := range v.orig {
		v.index[id] = c
	}
	return v
}

// Size is the number of compact ids.
func (v *CompactVocab) Size() int { return len(v.orig) }

// Original returns the BPE id of compact id c.
func (v *CompactVocab) Original(c int) int { return v.orig[c] }

// Compact returns a copy of ex with compact ids; an id outside the
// vocabulary is an error.
func (v *CompactVocab) Compact(ex []Encoded) ([]Encoded, error) {
	out := make([]Encoded, len(ex))
	for i, e := range ex {
		ids := make([]int, len(e.Ids))
		for k, id := range e.Ids {
			c, ok := v.index[id]
			if !ok {
				return nil, fmt.Errorf("record %q: token id %d is not in the compact vocabulary of %d tokens", e.ID, id, len(v.orig))
			}
			ids[k] = c
		}
		out[i] = Encoded{ID: e.ID, Ids: ids, First: e.First}
	}
	return out, nil
}
