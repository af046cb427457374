package robustfill

// Hand-written matchers for the regex types of Fig. 3. Every type is a
// character class, a greedy run of one, or (PROP_CASE) an upper-case letter
// followed by a run of lower-case letters, so a left-to-right scan that takes
// the longest match at the leftmost possible start gives exactly the
// leftmost, non-overlapping matches of a backtracking regex engine (Python's
// re.finditer), without the regexp package's cost. Classes are ASCII only: a
// byte of a multi-byte UTF-8 character never matches, as in the reference
// regexes, so byte offsets are safe to slice with.

// span is a match [s, e) in byte offsets.
type span struct{ s, e int }

const (
	clUpper = 1 << iota
	clLower
	clDigit
	clChar // letter, digit or delimiter
)

var class = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= clUpper | clChar
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= clLower | clChar
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= clDigit | clChar
	}
	for i := 0; i < len(Delimiters); i++ {
		t[Delimiters[i]] |= clChar
	}
	return t
}()

// runClass is the class whose maximal runs are the matches of t, for the
// run types.
func runClass(t Type) uint8 {
	switch t {
	case Number:
		return clDigit
	case Word:
		return clUpper | clLower
	case Alphanum:
		return clUpper | clLower | clDigit
	case AllCaps:
		return clUpper
	case Lower:
		return clLower
	}
	return 0
}

// findAll appends the matches of r in v to buf and returns it.
func findAll(r Regex, v string, buf []span) []span {
	buf = buf[:0]
	n := len(v)
	switch r.Type {
	case TypeInvalid:
		for i := 0; i < n; i++ {
			if v[i] == r.Delim {
				buf = append(buf, span{i, i + 1})
			}
		}
	case Digit, Char:
		cl := uint8(clDigit)
		if r.Type == Char {
			cl = clChar
		}
		for i := 0; i < n; i++ {
			if class[v[i]]&cl != 0 {
				buf = append(buf, span{i, i + 1})
			}
		}
	case PropCase:
		for i := 0; i+1 < n; {
			if class[v[i]]&clUpper == 0 || class[v[i+1]]&clLower == 0 {
				i++
				continue
			}
			j := i + 2
			for j < n && class[v[j]]&clLower != 0 {
				j++
			}
			buf = append(buf, span{i, j})
			i = j
		}
	default:
		cl := runClass(r.Type)
		for i := 0; i < n; {
			if class[v[i]]&cl == 0 {
				i++
				continue
			}
			j := i + 1
			for j < n && class[v[j]]&cl != 0 {
				j++
			}
			buf = append(buf, span{i, j})
			i = j
		}
	}
	return buf
}
