package attention

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gorgonia.org/tensor"
)

// Mask names a decoder self-attention pattern.
type Mask string

// The decoder masks. The three decompositional masks follow Shi et al.
// (2022, §4.2) and are meant for targets that carry a separator after every
// program part.
const (
	// Causal lets each token attend to itself and every earlier token.
	Causal Mask = "causal"
	// SepFull: separator tokens see everything before them.
	SepFull Mask = "sep-full"
	// SepToSepAndLast: separators see earlier separators and the last token
	// of each earlier part.
	SepToSepAndLast Mask = "sep-to-sep-and-last"
	// SepToLast: separators see only the last token of each earlier part.
	SepToLast Mask = "sep-to-last"
)

// Masks lists every mask name, sorted.
func Masks() []Mask {
	m := []Mask{Causal, SepFull, SepToLast, SepToSepAndLast}
	sort.Slice(m, func(i, j int) bool { return m[i] < m[j] })
	return m
}

// ParseMask turns a name into a Mask.
func ParseMask(name string) (Mask, error) {
	for _, m := range Masks() {
		if string(m) == name {
			return m, nil
		}
	}
	names := make([]string, 0, 4)
	for _, m := range Masks() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown mask %q (want one of %s)", name, strings.Join(names, ", "))
}

// Decompositional reports whether m is one of the separator-based masks.
func (m Mask) Decompositional() bool { return m != Causal }

// Allowed returns the [T][T] matrix of which query position i may attend to
// which key position j, for decoder input tokens x_0..x_{T-1} described by
// sep (x_i is a separator) and pad (x_i is padding). x_0, the start token,
// always counts as a separator (Shi et al. reuse the start token as the
// separator).
//
// With C[i,j] = j <= i, k_i the number of separators among x_0..x_i,
// P[i,j] = C[i,j] and k_i = k_j (a token sees its own part, from the
// separator that opened it) and BB[i,j] = C[i,j] and x_i, x_j both
// separators, a non-separator row is P and a separator row is P or B, where
//
//	sep-full:            B[i,j] = C[i,j]
//	sep-to-last:         B[i,j] = BB[i,j+1]
//	sep-to-sep-and-last: B[i,j] = BB[i,j] or BB[i,j+1]
//
// Causal is C. Padding never attends and is never attended to, so a padding
// row is all false.
func Allowed(m Mask, sep, pad []bool) ([][]bool, error) {
	t := len(sep)
	if len(pad) != t {
		return nil, fmt.Errorf("mask %s: %d separator flags but %d padding flags", m, t, len(pad))
	}
	if _, err := ParseMask(string(m)); err != nil {
		return nil, err
	}
	isSep := func(i int) bool { return i == 0 || sep[i] }
	k := make([]int, t) // separators among x_0..x_i
	for i := range t {
		if i > 0 {
			k[i] = k[i-1]
		}
		if isSep(i) {
			k[i]++
		}
	}
	bb := func(i, j int) bool { return j < t && j <= i && isSep(i) && isSep(j) }
	a := make([][]bool, t)
	for i := range t {
		a[i] = make([]bool, t)
		if pad[i] {
			continue
		}
		for j := 0; j <= i; j++ {
			if pad[j] {
				continue
			}
			if m == Causal {
				a[i][j] = true
				continue
			}
			p := k[i] == k[j]
			if !isSep(i) {
				a[i][j] = p
				continue
			}
			var b bool
			switch m {
			case SepFull:
				b = true // C[i,j] holds: j <= i
			case SepToLast:
				b = bb(i, j+1)
			case SepToSepAndLast:
				b = bb(i, j) || bb(i, j+1)
			}
			a[i][j] = p || b
		}
	}
	return a, nil
}

// Padding returns the mask of attention from queries to keys when only
// padding is masked: the encoder's self-attention and the decoder's
// cross-attention. Padding queries attend to nothing.
func Padding(qPad, kPad []bool) [][]bool {
	a := make([][]bool, len(qPad))
	for i := range a {
		a[i] = make([]bool, len(kPad))
		if qPad[i] {
			continue
		}
		for j := range a[i] {
			a[i][j] = !kPad[j]
		}
	}
	return a
}

// Flags classifies token ids into separator and padding flags for Allowed.
// start and sep are both separators (they may be the same id).
func Flags(tokens []int, start, sep, pad int) (isSep, isPad []bool) {
	isSep = make([]bool, len(tokens))
	isPad = make([]bool, len(tokens))
	for i, id := range tokens {
		isSep[i] = id == start || id == sep
		isPad[i] = id == pad
	}
	return isSep, isPad
}

// Additive turns one [Tq][Tk] boolean mask per batch element into the
// additive mask tensor [B, 1, Tq, Tk] that ops.AttentionSoftmax takes:
// 0 where attention is allowed, -Inf where it is not.
func Additive(masks [][][]bool) (*tensor.Dense, error) {
	if len(masks) == 0 || len(masks[0]) == 0 {
		return nil, fmt.Errorf("additive mask: empty batch")
	}
	tq, tk := len(masks[0]), len(masks[0][0])
	v := make([]float32, 0, len(masks)*tq*tk)
	negInf := float32(math.Inf(-1))
	for b, m := range masks {
		if len(m) != tq {
			return nil, fmt.Errorf("additive mask: element %d has %d rows, want %d", b, len(m), tq)
		}
		for i, row := range m {
			if len(row) != tk {
				return nil, fmt.Errorf("additive mask: element %d row %d has %d columns, want %d", b, i, len(row), tk)
			}
			for _, ok := range row {
				if ok {
					v = append(v, 0)
				} else {
					v = append(v, negInf)
				}
			}
		}
	}
	return tensor.New(tensor.WithShape(len(masks), 1, tq, tk), tensor.WithBacking(v)), nil // [B, 1, Tq, Tk]
}

// Render draws the decoder self-attention mask m over the decoder input
// toks (the start token first, counted as a separator; sepTok marks the
// others): one line per query position, 1 where it may attend to that key
// position and 0 where not, each line prefixed with its token when labels.
func Render(m Mask, toks []string, sepTok string, labels bool) (string, error) {
	sep := make([]bool, len(toks))
	for i, t := range toks {
		sep[i] = i == 0 || t == sepTok
	}
	a, err := Allowed(m, sep, make([]bool, len(toks)))
	if err != nil {
		return "", err
	}
	width := 0
	for _, t := range toks {
		width = max(width, len(t))
	}
	var sb strings.Builder
	for i, row := range a {
		if labels {
			fmt.Fprintf(&sb, "%-*s ", width, toks[i])
		}
		for j, ok := range row {
			if j > 0 {
				sb.WriteByte(' ')
			}
			if ok {
				sb.WriteByte('1')
			} else {
				sb.WriteByte('0')
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String(), nil
}
