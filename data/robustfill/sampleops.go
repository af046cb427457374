package robustfill

import "math/rand/v2"

// Argument samplers, one per operation. Arguments come from what the inputs
// contain (their types and delimiters, indices within their counts), and
// the operations that can return "" are drawn again until they give a
// non-empty output on every example (as in the authors' generator); ToCase,
// Replace, Substitute, SubstituteAll and ConstStr never shorten a value to
// nothing, so they are not checked.

// index draws an index in ±1..min(count, 5).
func index(rng *rand.Rand, count int) int {
	m := min(max(count, 1), MaxIndex)
	v := 1 + rng.IntN(m)
	if rng.IntN(2) == 0 {
		return -v
	}
	return v
}

func (s *Sampler) typ(rng *rand.Rand) Type {
	return s.ctx.types[rng.IntN(len(s.ctx.types))]
}

// regex draws a delimiter present in the inputs or a type, each half of the
// time, with its number of occurrences.
func (s *Sampler) regex(rng *rand.Rand) (Regex, int) {
	c := &s.ctx
	if len(c.delims) > 0 && rng.IntN(2) == 0 {
		d := c.delims[rng.IntN(len(c.delims))]
		return DelimRegex(d), c.delimCount[d]
	}
	t := s.typ(rng)
	return TypeRegex(t), c.typeCount[t]
}

func boundary(rng *rand.Rand) Boundary { return Start + Boundary(rng.IntN(2)) }

func char(rng *rand.Rand) byte { return Characters[rng.IntN(len(Characters))] }

func (s *Sampler) opExpr(rng *rand.Rand, op Op) (Expr, bool) {
	c := &s.ctx
	e := Expr{Op: op}
	switch op {
	case ToCase:
		e.Case = Proper + Case(rng.IntN(int(numCases-Proper)))
		return e, true
	case Replace:
		if len(c.delims) > 0 {
			e.D1 = c.delims[rng.IntN(len(c.delims))]
		} else {
			e.D1 = Delimiters[rng.IntN(len(Delimiters))]
		}
		e.D2 = Delimiters[rng.IntN(len(Delimiters))]
		return e, true
	case Substitute:
		e.T = s.typ(rng)
		e.I1 = index(rng, c.typeCount[e.T])
		e.C = char(rng)
		return e, true
	case SubstituteAll:
		e.T = s.typ(rng)
		e.C = char(rng)
		return e, true
	case ConstStr:
		e.C = char(rng)
		return e, true
	case Trim:
		return e, s.nonEmpty(&e)
	case Remove, RemoveAll:
		// Try every type once, in random order.
		order := append([]Type(nil), c.types...)
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		for _, t := range order {
			e.T = t
			if op == Remove {
				e.I1 = index(rng, c.typeCount[t])
			}
			if s.nonEmpty(&e) {
				return e, true
			}
		}
		return Expr{}, false
	}
	for range s.cfg.MaxTries {
		switch op {
		case SubStr:
			m := c.minLen
			v := rng.IntN(2 * m) // k1 in ±1..m
			if v < m {
				e.K1 = v + 1
				e.K2 = e.K1 + rng.IntN(m-e.K1+1) // k1..m
			} else {
				e.K1 = -(v - m + 1)
				e.K2 = e.K1 + rng.IntN(-e.K1) // k1..-1
			}
		case GetSpan:
			var n1, n2 int
			e.R1, n1 = s.regex(rng)
			e.I1, e.B1 = index(rng, n1), boundary(rng)
			e.R2, n2 = s.regex(rng)
			e.I2, e.B2 = index(rng, n2), boundary(rng)
		case GetToken, GetFirst:
			e.T = s.typ(rng)
			e.I1 = index(rng, c.typeCount[e.T])
		case GetUpto, GetFrom:
			e.R1, _ = s.regex(rng)
		case GetAll:
			e.T = s.typ(rng)
		default:
			return Expr{}, false
		}
		if s.nonEmpty(&e) {
			return e, true
		}
	}
	return Expr{}, false
}
