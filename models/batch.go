package models

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"compbench/data"
)

// Example is one record as token ids.
type Example struct {
	// ID is the record id.
	ID string
	// Src are the source ids, without EOS.
	Src []int
	// Tgt are the target ids ending in EOS; with separators, each program
	// part is followed by SepID: p1 SEP p2 SEP ... pk SEP EOS.
	Tgt []int
}

// EncodeOptions say how records become examples.
type EncodeOptions struct {
	// Separators inserts SepID after every program part (records' Parts).
	Separators bool
	// MaxSrc is the longest source kept, in tokens.
	MaxSrc int
	// MaxTgt is the longest target kept, EOS and separators included.
	MaxTgt int
	// Strict makes over-long examples an error instead of truncating them.
	Strict bool
	// Copy gives a target token missing from the target vocabulary the
	// extended id len(Target)+j of its first source position j (< MaxSrc),
	// for models that copy (lstm-copy); only tokens found nowhere count as
	// unknown.
	Copy bool
	// Prefix is put before every source text (a pretrained T5's task
	// prefix; Config.Prefix).
	Prefix string
}

// EncodeOptions are the options the model of c reads its records with;
// strict refuses over-long examples.
func (c *Config) EncodeOptions(strict bool) EncodeOptions {
	return EncodeOptions{Separators: c.Separators, MaxSrc: c.MaxSrcLen, MaxTgt: c.MaxTgtLen, Strict: strict,
		Copy: Copies(c.Variant), Prefix: c.Prefix}
}

// EncodeStats counts what encoding changed.
type EncodeStats struct {
	// Truncated counts examples cut to the length limits.
	Truncated int
	// SrcCut and TgtCut say how much was cut from sources and from targets
	// (an example cut on both sides counts in each).
	SrcCut, TgtCut Cut
	// UnknownSrc and UnknownTgt count tokens missing from the vocabulary.
	UnknownSrc, UnknownTgt int
}

// Cut counts the sequences a length limit shortened and the tokens it
// removed.
type Cut struct {
	// N sequences were cut, by at most Max and in all Sum tokens.
	N, Max, Sum int
}

func (c *Cut) add(tokens int) {
	c.N++
	c.Max = max(c.Max, tokens)
	c.Sum += tokens
}

// Mean is the tokens cut from a shortened sequence, on average.
func (c Cut) Mean() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.Sum) / float64(c.N)
}

// Truncation says what Encode cut from n examples under the limits of o,
// in one line for a warning, with the limits that would keep every
// example whole; "" when nothing was cut.
func (s EncodeStats) Truncation(n int, o EncodeOptions) string {
	if s.Truncated == 0 {
		return ""
	}
	side := func(c Cut, limit int, flag string) string {
		if c.N == 0 {
			return fmt.Sprintf("none longer than %d tokens", limit)
		}
		return fmt.Sprintf("%d longer than %d tokens, cut by up to %d (mean %.1f), %s %d keeps them whole",
			c.N, limit, c.Max, c.Mean(), flag, limit+c.Max)
	}
	return fmt.Sprintf("%d of %d examples truncated; sources: %s; targets: %s", s.Truncated, n,
		side(s.SrcCut, o.MaxSrc, "--max-src"), side(s.TgtCut, o.MaxTgt, "--max-tgt"))
}

// Encode turns records into examples. Records without Parts get one part,
// their whole output, so separators still end the target.
func Encode(v *Vocab, recs []data.Record, o EncodeOptions) ([]Example, EncodeStats, error) {
	var st EncodeStats
	out := make([]Example, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		src, us, err := v.sourceIDs(r, o.Prefix)
		if err != nil {
			return nil, st, fmt.Errorf("record %q: %w", r.ID, err)
		}
		tgt, ut, err := targetIDs(v, r, o.Separators)
		if o.Copy {
			ut = copyIDs(v, r, tgt, o.Separators, o.MaxSrc)
		}
		if err != nil {
			return nil, st, fmt.Errorf("record %q: %w", r.ID, err)
		}
		st.UnknownSrc += us
		st.UnknownTgt += ut
		if len(src) > o.MaxSrc || len(tgt) > o.MaxTgt {
			if o.Strict {
				return nil, st, fmt.Errorf("record %q: source %d / target %d tokens exceed the model's limits %d / %d (drop --strict to truncate)",
					r.ID, len(src), len(tgt), o.MaxSrc, o.MaxTgt)
			}
			st.Truncated++
			if len(src) > o.MaxSrc {
				st.SrcCut.add(len(src) - o.MaxSrc)
				src = src[:o.MaxSrc]
			}
			if len(tgt) > o.MaxTgt {
				st.TgtCut.add(len(tgt) - o.MaxTgt)
				tgt = append(tgt[:o.MaxTgt-1:o.MaxTgt-1], EOSID)
			}
		}
		out = append(out, Example{ID: r.ID, Src: src, Tgt: tgt})
	}
	return out, st, nil
}

func targetIDs(v *Vocab, r *data.Record, sep bool) ([]int, int, error) {
	if !sep {
		ids, unk, err := v.TextIDs(r.Output)
		return append(ids, EOSID), unk, err
	}
	parts := r.Parts
	if len(parts) == 0 {
		parts = []string{r.Output}
	}
	var ids []int
	unk := 0
	for _, p := range parts {
		pi, u, err := v.TextIDs(p)
		if err != nil {
			return nil, 0, err
		}
		ids = append(append(ids, pi...), SepID)
		unk += u
	}
	return append(ids, EOSID), unk, nil
}

// Batch is a padded group of examples; its shape keys the compiled graph.
type Batch struct {
	// Rows are the examples; fewer than the batch size at the end of a
	// bucket, the missing rows being all padding.
	Rows []*Example
	// B, S, T are the padded shape: rows, source length, target length.
	B, S, T int
	// Src [B, S] source ids, PadID beyond each row's length.
	Src []int
	// DecIn [B, T] decoder inputs: StartID then the target shifted right.
	DecIn []int
	// Tgt [B, T] target ids, PadID where not scored.
	Tgt []int
	// Tokens counts target tokens scored.
	Tokens int
}

// RoundUp rounds n up to a multiple of w (w >= 1), at least w.
func RoundUp(n, w int) int {
	if n < 1 {
		n = 1
	}
	return (n + w - 1) / w * w
}

// SyntheticBatch is a benchmark batch of n rows with srcLen source and
// tgtLen target tokens (the last one EOS) drawn deterministically from ids
// [4, vocab), padded to multiples of 8: the same shapes and ids wherever a
// benchmark compares the CPU, the GPU and PyTorch.
func SyntheticBatch(n, srcLen, tgtLen, vocab int) *Batch {
	rows := make([]Example, n)
	ptr := make([]*Example, n)
	for i := range rows {
		src, tgt := make([]int, srcLen), make([]int, tgtLen)
		for j := range src {
			src[j] = 4 + (i+j)%(vocab-4)
		}
		for j := range tgt {
			tgt[j] = 4 + (i*7+j)%(vocab-4)
		}
		tgt[tgtLen-1] = EOSID
		rows[i] = Example{Src: src, Tgt: tgt}
		ptr[i] = &rows[i]
	}
	return MakeBatch(ptr, n, 8)
}

// MakeBatch pads rows into a batch of b rows with lengths rounded up to a
// multiple of width, so few distinct graph shapes arise.
func MakeBatch(rows []*Example, b, width int) *Batch {
	s, t := 1, 1
	for _, e := range rows {
		s = max(s, len(e.Src))
		t = max(t, len(e.Tgt))
	}
	s, t = RoundUp(s, width), RoundUp(t, width)
	bt := &Batch{Rows: rows, B: b, S: s, T: t,
		Src: make([]int, b*s), DecIn: make([]int, b*t), Tgt: make([]int, b*t)}
	for i, e := range rows {
		copy(bt.Src[i*s:], e.Src)
		bt.DecIn[i*t] = StartID
		copy(bt.DecIn[i*t+1:(i+1)*t], e.Tgt[:len(e.Tgt)-1])
		copy(bt.Tgt[i*t:], e.Tgt)
		bt.Tokens += len(e.Tgt)
	}
	return bt
}

// Batches groups examples of similar length into batches of b rows (with
// tokens > 0: max(1, min(b, tokens / padded target length)) rows, so
// batches hold about the same number of target tokens):
// examples are sorted by (target, source) length bucket, cut into batches,
// and the batch order shuffled by rng (nil keeps the sorted order, for
// evaluation). Within a bucket the examples are shuffled first, so each
// epoch sees different batch compositions.
func Batches(ex []Example, b, tokens, width int, rng *rand.Rand) []*Batch {
	idx := make([]int, len(ex))
	for i := range idx {
		idx[i] = i
	}
	if rng != nil {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	}
	key := func(e *Example) [2]int {
		return [2]int{RoundUp(len(e.Tgt), width), RoundUp(len(e.Src), width)}
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, c := key(&ex[idx[i]]), key(&ex[idx[j]])
		if a[0] != c[0] {
			return a[0] < c[0]
		}
		return a[1] < c[1]
	})
	var out []*Batch
	for start := 0; start < len(idx); {
		k := key(&ex[idx[start]])
		rowsMax := b
		if tokens > 0 {
			rowsMax = max(1, min(b, tokens/k[0]))
		}
		end := start
		var rows []*Example
		for end < len(idx) && len(rows) < rowsMax && key(&ex[idx[end]]) == k {
			rows = append(rows, &ex[idx[end]])
			end++
		}
		out = append(out, MakeBatch(rows, rowsMax, width))
		start = end
	}
	if rng != nil {
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

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

// TruncationNote is what the length limits of c would cut from recs, as
// Encode counts it ("" when nothing), so that a run says before any work
// how many examples lose tokens, how many, and which limits keep them
// whole. A pretrained model counts subword pieces, which need its
// tokenizer; its runs rely on the training loop's count alone.
func TruncationNote(c Config, recs []data.Record) string {
	if c.Pretrained != "" || len(recs) == 0 {
		return ""
	}
	// Token counts do not depend on which ids the tokens get: a vocabulary
	// of recs themselves measures them.
	o := c.EncodeOptions(false)
	_, st, err := Encode(BuildVocab(recs), recs, o)
	if err != nil {
		return ""
	}
	return st.Truncation(len(recs), o)
}
