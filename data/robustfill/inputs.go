package robustfill

import (
	"math/rand/v2"
	"strings"
)

// Input strings (paper App. A; the authors' generator): every example of a
// task shares one skeleton of pieces. A piece is a delimiter repeated k
// times, or k random strings of one regex type (each a delimiter followed by
// 1-4 characters of the type, fresh per example). Each example shuffles its
// pieces and is cut to the maximum length, so the examples differ but have
// the same kinds of content, which the program's arguments are drawn from.

const (
	lowers  = "abcdefghijklmnopqrstuvwxyz"
	uppers  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits  = "0123456789"
	letters = uppers + lowers
	alnums  = letters + digits
)

// maxPieceChars bounds the characters of one typed piece after its delimiter.
const maxPieceChars = 4

// inputCtx is what the expression samplers know about a task's inputs.
type inputCtx struct {
	inputs []string
	// types lists the skeleton's types (and CHAR) that match in some
	// example, in first-use order; typeCount[t] is the most matches of t
	// in one example.
	types     []Type
	typeCount [numTypes]int
	// delims lists the delimiters present, in first-use order, with the
	// most occurrences in one example.
	delims     []byte
	delimCount [256]int
	// minLen is the shortest input's length.
	minLen int
	sc     scratch
}

func (c *inputCtx) addType(t Type, k int) {
	if c.typeCount[t] == 0 {
		c.types = append(c.types, t)
	}
	c.typeCount[t] += k
}

func (c *inputCtx) addDelim(d byte, k int) {
	if c.delimCount[d] == 0 {
		c.delims = append(c.delims, d)
	}
	c.delimCount[d] += k
}

// reset empties c for a new task, keeping its buffers.
func (c *inputCtx) reset() {
	c.inputs = c.inputs[:0]
	c.types = c.types[:0]
	c.typeCount = [numTypes]int{}
	c.delims = c.delims[:0]
	c.delimCount = [256]int{}
	c.minLen = 0
}

// sampleInputs fills c with cfg.NumExamples fresh input strings.
func (c *inputCtx) sampleInputs(rng *rand.Rand, cfg *Config) {
	c.reset()
	n := cfg.NumExamples
	pieces := make([][]string, n)
	nPieces := 3 + rng.IntN(cfg.MaxInputPieces-2)
	lens := make([]int, n)
	for range nPieces {
		k := 1 + rng.IntN(cfg.MaxRepeat)
		if rng.IntN(3) == 0 {
			d := Delimiters[rng.IntN(len(Delimiters))]
			c.addDelim(d, k)
			for j := range n {
				for range k {
					pieces[j] = append(pieces[j], string(d))
				}
				lens[j] += k
			}
		} else {
			t := Number + Type(rng.IntN(int(numTypes-Number)))
			c.addType(t, k)
			for j := range n {
				for range k {
					s := typedPiece(rng, t)
					c.addDelim(s[0], 1)
					pieces[j] = append(pieces[j], s)
					lens[j] += len(s)
				}
			}
		}
		if longest(lens) >= cfg.MaxInputLen {
			break
		}
	}
	buf := make([]byte, 0, 64)
	for j := range n {
		rng.Shuffle(len(pieces[j]), func(a, b int) { pieces[j][a], pieces[j][b] = pieces[j][b], pieces[j][a] })
		buf = buf[:0]
		for _, s := range pieces[j] {
			buf = append(buf, s...)
		}
		if len(buf) > cfg.MaxInputLen {
			buf = buf[:cfg.MaxInputLen]
		}
		c.inputs = append(c.inputs, string(buf))
	}
	c.minLen = len(c.inputs[0])
	for _, s := range c.inputs {
		c.minLen = min(c.minLen, len(s))
	}
	// Every character matches CHAR.
	if c.typeCount[Char] == 0 {
		c.types = append(c.types, Char)
	}
	c.recount()
}

// recount replaces the skeleton's counts by the most matches any example
// has: shuffling joins neighbouring pieces (two WORD pieces with no
// delimiter between them are one match) and the cut drops some, so the
// skeleton over- or under-states what indices can reach.
func (c *inputCtx) recount() {
	types := c.types[:0]
	for _, t := range c.types {
		n := 0
		for _, in := range c.inputs {
			c.sc.spans = findAll(TypeRegex(t), in, c.sc.spans)
			n = max(n, len(c.sc.spans))
		}
		c.typeCount[t] = n
		if n > 0 { // a type cut away everywhere is no argument
			types = append(types, t)
		}
	}
	c.types = types
	delims := c.delims[:0]
	for _, d := range c.delims {
		n := 0
		for _, in := range c.inputs {
			n = max(n, strings.Count(in, string(d)))
		}
		c.delimCount[d] = n
		if n > 0 {
			delims = append(delims, d)
		}
	}
	c.delims = delims
}

func longest(lens []int) int {
	m := 0
	for _, l := range lens {
		m = max(m, l)
	}
	return m
}

// typedPiece is one string of type t, led by a random delimiter.
func typedPiece(rng *rand.Rand, t Type) string {
	var b [1 + maxPieceChars]byte
	b[0] = Delimiters[rng.IntN(len(Delimiters))]
	n := 1 + rng.IntN(maxPieceChars)
	pick := func(set string) byte { return set[rng.IntN(len(set))] }
	switch t {
	case Number, Digit:
		for i := 1; i <= n; i++ {
			b[i] = pick(digits)
		}
	case Word:
		for i := 1; i <= n; i++ {
			b[i] = pick(letters)
		}
	case Alphanum, Char:
		for i := 1; i <= n; i++ {
			b[i] = pick(alnums)
		}
	case AllCaps:
		for i := 1; i <= n; i++ {
			b[i] = pick(uppers)
		}
	case PropCase:
		n = 2 + rng.IntN(maxPieceChars-1) // a capital and 1-3 lower-case letters
		b[1] = pick(uppers)
		for i := 2; i <= n; i++ {
			b[i] = pick(lowers)
		}
	case Lower:
		for i := 1; i <= n; i++ {
			b[i] = pick(lowers)
		}
	}
	return string(b[:1+n])
}
