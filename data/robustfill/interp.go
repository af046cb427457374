package robustfill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The interpreter follows the semantics fixed for compbench (docs/robustfill.md),
// which tighten two edge cases of the authors' code: SubStr treats the
// second position as inclusive (SubStr(2,2) is the second character, where
// the reference gives ""), and GetSpan clamps an out-of-range index to the
// first or last match and uses that match's offset. Everything else,
// including SubStr's order check before its positions are cut to the value,
// follows the reference. Strings are sequences of Unicode code
// points (as in Python); generated data is ASCII, which takes fast paths.

// scratch holds buffers reused across evaluations.
type scratch struct {
	spans []span
}

// Run executes the program on one input string. It fails only for an
// invalid program (one Validate rejects).
func (p Program) Run(input string) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	var sc scratch
	return p.run(input, &sc), nil
}

// run executes a program already validated.
func (p Program) run(input string, sc *scratch) string {
	if len(p) == 1 {
		return p[0].eval(input, sc)
	}
	var b strings.Builder
	for i := range p {
		b.WriteString(p[i].eval(input, sc))
	}
	return b.String()
}

// Eval executes one expression on v.
func (e *Expr) Eval(v string) (string, error) {
	if err := e.Validate(); err != nil {
		return "", err
	}
	var sc scratch
	return e.eval(v, &sc), nil
}

// resolve turns a 1-based index (negative from the end) into a 0-based one;
// the result may be out of [0, n).
func resolve(i, n int) int {
	if i > 0 {
		return i - 1
	}
	return n + i
}

func (e *Expr) eval(v string, sc *scratch) string {
	switch e.Op {
	case SubStr:
		return subStr(v, e.K1, e.K2)
	case GetSpan:
		o1, ok1 := spanOffset(e.R1, e.I1, e.B1, v, sc)
		o2, ok2 := spanOffset(e.R2, e.I2, e.B2, v, sc)
		if !ok1 || !ok2 || o2 <= o1 {
			return ""
		}
		return v[o1:o2]
	case GetToken:
		sc.spans = findAll(TypeRegex(e.T), v, sc.spans)
		j := resolve(e.I1, len(sc.spans))
		if j < 0 || j >= len(sc.spans) {
			return ""
		}
		m := sc.spans[j]
		return v[m.s:m.e]
	case GetUpto:
		sc.spans = findAll(e.R1, v, sc.spans)
		if len(sc.spans) == 0 {
			return ""
		}
		return v[:sc.spans[0].e]
	case GetFrom:
		sc.spans = findAll(e.R1, v, sc.spans)
		if len(sc.spans) == 0 {
			return ""
		}
		return v[sc.spans[0].e:]
	case ToCase:
		return toCase(v, e.Case)
	case Replace:
		return strings.ReplaceAll(v, string(e.D1), string(e.D2))
	case Trim:
		return strings.TrimFunc(v, isPySpace)
	case GetFirst:
		sc.spans = findAll(TypeRegex(e.T), v, sc.spans)
		k := e.I1
		if k < 0 {
			k += len(sc.spans) // all but the last |i|
		}
		return join(v, sc.spans[:max(0, min(k, len(sc.spans)))])
	case GetAll:
		sc.spans = findAll(TypeRegex(e.T), v, sc.spans)
		return join(v, sc.spans)
	case Substitute, Remove:
		sc.spans = findAll(TypeRegex(e.T), v, sc.spans)
		j := resolve(e.I1, len(sc.spans))
		if j < 0 || j >= len(sc.spans) {
			return v
		}
		with := ""
		if e.Op == Substitute {
			with = string(e.C)
		}
		m := sc.spans[j]
		// The first occurrence of the match's text, which may lie before
		// the match itself (Substitute(DIGIT,2,c) on "1a1" changes the
		// first "1").
		return strings.Replace(v, v[m.s:m.e], with, 1)
	case SubstituteAll, RemoveAll:
		sc.spans = findAll(TypeRegex(e.T), v, sc.spans)
		if len(sc.spans) == 0 {
			return v
		}
		with := ""
		if e.Op == SubstituteAll {
			with = string(e.C)
		}
		orig, cur := v, v
		for _, m := range sc.spans {
			cur = strings.Replace(cur, orig[m.s:m.e], with, 1)
		}
		return cur
	case Compose:
		return e.Mod.eval(e.Arg.eval(v, sc), sc)
	case ConstStr:
		return string(e.C)
	}
	panic(fmt.Sprintf("robustfill: eval of unvalidated expression %v", e.Op))
}

func join(v string, ms []span) string {
	switch len(ms) {
	case 0:
		return ""
	case 1:
		return v[ms[0].s:ms[0].e]
	}
	n := 0
	for _, m := range ms {
		n += m.e - m.s
	}
	b := make([]byte, 0, n)
	for _, m := range ms {
		b = append(b, v[m.s:m.e]...)
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// subStr implements SubStr(k1, k2) in the order of the authors' DSL
// (latent_programmer's robust_fill dsl.py): p1 = k1-1 if k1 > 0 else n+k1,
// p2 likewise; the order check comes first, on these unclamped positions,
// so a reversed pair is "" wherever it points (SubStr(-16, -20) on "abc");
// only then are the positions cut to the value, as a Python slice
// v[p1:p2+1] cuts them: a negative end counts from the end once more, then
// ends clamp to [0, n]. The one difference from the reference is p1 = p2,
// which it returns as "" and compbench as that one character (p2 inclusive,
// docs/robustfill.md).
func subStr(v string, k1, k2 int) string {
	if isASCII(v) {
		s, e, ok := subStrRange(len(v), k1, k2)
		if !ok {
			return ""
		}
		return v[s:e]
	}
	r := []rune(v)
	s, e, ok := subStrRange(len(r), k1, k2)
	if !ok {
		return ""
	}
	return string(r[s:e])
}

// subStrRange returns the slice [s, e) SubStr(k1, k2) takes from a value of
// n characters; ok is false when it is empty.
func subStrRange(n, k1, k2 int) (s, e int, ok bool) {
	p1, p2 := resolve(k1, n), resolve(k2, n)
	if p1 > p2 { // before any clamping, as the reference orders it
		return 0, 0, false
	}
	s, e = pySliceIndex(p1, n), pySliceIndex(p2+1, n)
	return s, e, s < e
}

// pySliceIndex is where Python puts a slice bound i on a sequence of n: a
// negative i counts from the end, and the result is clamped to [0, n].
func pySliceIndex(i, n int) int {
	if i < 0 {
		i += n
	}
	return min(max(i, 0), n)
}

// spanOffset is one end of GetSpan: the start or end offset of the i-th
// match of r, with out-of-range indices clamped to the first or last match.
func spanOffset(r Regex, i int, b Boundary, v string, sc *scratch) (int, bool) {
	sc.spans = findAll(r, v, sc.spans)
	n := len(sc.spans)
	if n == 0 {
		return 0, false
	}
	j := min(max(resolve(i, n), 0), n-1)
	if b == Start {
		return sc.spans[j].s, true
	}
	return sc.spans[j].e, true
}

// isPySpace is Python's str.isspace for one character: Unicode white space
// plus the separators U+001C..U+001F, which Go's unicode.IsSpace omits.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// toCase implements ToCase. PROPER is Python's str.capitalize: the first
// character upper-cased, the rest lower-cased.
func toCase(v string, c Case) string {
	if !isASCII(v) {
		switch c {
		case AllCapsCase:
			return strings.ToUpper(v)
		case LowerCase:
			return strings.ToLower(v)
		}
		r, size := utf8.DecodeRuneInString(v)
		return string(unicode.ToTitle(r)) + strings.ToLower(v[size:])
	}
	b := []byte(v)
	for i, ch := range b {
		up := c == AllCapsCase || (c == Proper && i == 0)
		if up && 'a' <= ch && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		} else if !up && 'A' <= ch && ch <= 'Z' {
			b[i] = ch - 'A' + 'a'
		}
	}
	return string(b)
}

// Solves reports whether the program maps every input to its output: the
// execution-accuracy criterion (a prediction is correct when it reproduces
// all outputs, whatever its text).
func (p Program) Solves(inputs, outputs []string) (bool, error) {
	if len(inputs) != len(outputs) {
		return false, fmt.Errorf("%d inputs but %d outputs", len(inputs), len(outputs))
	}
	if err := p.Validate(); err != nil {
		return false, err
	}
	var sc scratch
	for i, in := range inputs {
		if p.run(in, &sc) != outputs[i] {
			return false, nil
		}
	}
	return true, nil
}
