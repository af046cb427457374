package split

import (
	"math"

	"compbench/data/structure"
)

// pairDiv keeps 1 - C_alpha(train || test) up to date as examples move, so
// a candidate move costs O(its entries): only the terms a_k^alpha b_k^(1-alpha)
// of the moved example's ids change, plus the two totals.
//
// The per-id values sit together in one term, so scoring an entry reads one
// or two cache lines. With caching on (MCD's candidate scoring, see
// newCachedPairDiv), each term also holds the powers what needs for an
// entry of weight 1, or of the id's most common other weight, moving in or
// out: on generated SCAN 63% of the compound entries weigh 1 (compounds of
// the largest size, and those no supergraph predicts) and 22% weigh their
// compound's most common other weight, and what spent most of its time in
// fastPow.
type pairDiv struct {
	alpha  float64
	t      []term
	A, B   float64 // totals
	S      float64 // sum_k pa_k pb_k
	cached bool    // keep term.ua, ub, wa and wb
}

// term is one id's state.
type term struct {
	a, b   float64 // raw train and test weights
	pa, pb float64 // cached a^alpha and b^(1-alpha)
	// ua[0], ua[1] are fastPow(a+1, alpha) and fastPow(a-1, alpha), ub the
	// same for b with 1-alpha: what's values for an entry of weight 1
	// added (sign 1) or removed (sign -1), computed from the same operands
	// so the scores are the same bits as without the cache. wa and wb are
	// the same for weight w.
	ua, ub [2]float64
	w      float64 // the id's most common weight other than 1 (0: none)
	wa, wb [2]float64
}

func newPairDiv(n int, alpha float64) *pairDiv {
	return &pairDiv{alpha: alpha, t: make([]term, n)}
}

// newCachedPairDiv is newPairDiv with the power caches kept (see pairDiv),
// worth it where candidates are scored far more often than moves are
// applied; es are the examples' entries, which give each id's most common
// weight other than 1 (ties: the smallest).
func newCachedPairDiv(n int, alpha float64, es [][]structure.Entry) *pairDiv {
	p := newPairDiv(n, alpha)
	p.cached = true
	type idW struct {
		id int32
		w  float64
	}
	count := map[idW]int{}
	for _, ex := range es {
		for _, e := range ex {
			if e.W != 1 {
				count[idW{e.ID, e.W}]++
			}
		}
	}
	best := make([]int, n)
	for k, c := range count {
		t := &p.t[k.id]
		if c > best[k.id] || c == best[k.id] && k.w < t.w {
			best[k.id], t.w = c, k.w
		}
	}
	for k := range p.t {
		p.t[k].fillA(alpha)
		p.t[k].fillB(alpha)
	}
	return p
}

// fillA and fillB recompute the caches of t's train and test side.
func (t *term) fillA(alpha float64) {
	t.ua = [2]float64{fastPow(t.a+1, alpha), fastPow(t.a+(-1), alpha)}
	t.wa = [2]float64{fastPow(t.a+t.w, alpha), fastPow(t.a+(-t.w), alpha)}
}

func (t *term) fillB(alpha float64) {
	t.ub = [2]float64{fastPow(t.b+1, 1-alpha), fastPow(t.b+(-1), 1-alpha)}
	t.wb = [2]float64{fastPow(t.b+t.w, 1-alpha), fastPow(t.b+(-t.w), 1-alpha)}
}

// eps absorbs float residue when weights are subtracted back to zero.
const eps = 1e-9

func (p *pairDiv) div(A, B, S float64) float64 {
	if A <= eps || B <= eps {
		return 1
	}
	return 1 - S/(math.Pow(A, p.alpha)*math.Pow(B, 1-p.alpha))
}

// current returns the divergence now.
func (p *pairDiv) current() float64 { return p.div(p.A, p.B, p.S) }

// what returns the divergence after adding (sign 1) or removing (sign -1)
// entries on the train (test false) or test side, without changing p.
func (p *pairDiv) what(es []structure.Entry, test bool, sign float64) float64 {
	dS, dT := 0.0, 0.0
	u := 0 // index of the cached powers for this sign
	if sign < 0 {
		u = 1
	}
	cached := p.cached && (sign == 1 || sign == -1)
	if !test {
		for _, e := range es {
			w := sign * e.W
			dT += w
			t := &p.t[e.ID]
			if t.b > 0 {
				var x float64
				switch {
				case cached && e.W == 1:
					x = t.ua[u]
				case cached && e.W == t.w:
					x = t.wa[u]
				default:
					x = fastPow(t.a+w, p.alpha)
				}
				dS += (x - t.pa) * t.pb
			}
		}
		return p.div(p.A+dT, p.B, p.S+dS)
	}
	for _, e := range es {
		w := sign * e.W
		dT += w
		t := &p.t[e.ID]
		if t.a > 0 {
			var x float64
			switch {
			case cached && e.W == 1:
				x = t.ub[u]
			case cached && e.W == t.w:
				x = t.wb[u]
			default:
				x = fastPow(t.b+w, 1-p.alpha)
			}
			dS += t.pa * (x - t.pb)
		}
	}
	return p.div(p.A, p.B+dT, p.S+dS)
}

func (p *pairDiv) pow(x, y float64) float64 {
	if x <= eps {
		return 0
	}
	return math.Pow(x, y)
}

// fastPow is x^y for the candidate scores of what, where math.Pow took
// most of the MCD search's time: x = m 2^e with m in [1/sqrt2, sqrt2), ln m
// from the atanh series (|t| <= 0.172, 6 terms, relative error below 1e-11),
// and 2^(y log2 x) from a rounded exponent and a degree-11 Taylor series
// (|f ln2| <= 0.347). It returns 0 for x <= eps, as pow does; apply and
// current keep using math.Pow, so the state itself stays exact.
func fastPow(x, y float64) float64 {
	if x <= eps {
		return 0
	}
	bits := math.Float64bits(x)
	e := int((bits>>52)&0x7ff) - 1023
	m := math.Float64frombits(bits&^(0x7ff<<52) | 1023<<52)
	if m > math.Sqrt2 {
		m /= 2
		e++
	}
	t := (m - 1) / (m + 1)
	t2 := t * t
	ln := 2 * t * (1 + t2*(1.0/3+t2*(1.0/5+t2*(1.0/7+t2*(1.0/9+t2*(1.0/11+t2/13))))))
	l := y * (float64(e) + ln/math.Ln2)
	i := math.Floor(l + 0.5)
	f := (l - i) * math.Ln2
	r := 1 + f*(1+f*(1.0/2+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720+f*(1.0/5040+f*(1.0/40320+f*(1.0/362880+f*(1.0/3628800+f/39916800))))))))))
	return r * math.Float64frombits(uint64(int64(i)+1023)<<52)
}

// apply moves entries in (sign 1) or out (sign -1) of one side.
func (p *pairDiv) apply(es []structure.Entry, test bool, sign float64) {
	for _, e := range es {
		t := &p.t[e.ID]
		w := sign * e.W
		p.S -= t.pa * t.pb
		if test {
			t.b += w
			if t.b <= eps {
				t.b = 0
			}
			p.B += w
			t.pb = p.pow(t.b, 1-p.alpha)
			if p.cached {
				t.fillB(p.alpha)
			}
		} else {
			t.a += w
			if t.a <= eps {
				t.a = 0
			}
			p.A += w
			t.pa = p.pow(t.a, p.alpha)
			if p.cached {
				t.fillA(p.alpha)
			}
		}
		p.S += t.pa * t.pb
	}
}

// adopt copies q's train side into p, whose test side must be empty.
func (p *pairDiv) adopt(q *pairDiv) {
	for k := range p.t {
		p.t[k].a, p.t[k].pa = q.t[k].a, q.t[k].pa
		if p.cached {
			p.t[k].w = q.t[k].w
			p.t[k].fillA(p.alpha)
		}
	}
	p.A = q.A
}

// resum recomputes S from the cached terms, shedding accumulated rounding.
func (p *pairDiv) resum() {
	p.S = 0
	for k := range p.t {
		p.S += p.t[k].pa * p.t[k].pb
	}
}

// exampleVectors returns per-example atom entries and compound entries with
// positive weight (zero weights never change the weighted distribution).
func exampleVectors(ix *structure.Index) (atoms, comps [][]structure.Entry) {
	atoms = make([][]structure.Entry, len(ix.Examples))
	comps = make([][]structure.Entry, len(ix.Examples))
	for i, ex := range ix.Examples {
		atoms[i] = ex.Atoms
		for _, c := range ex.Compounds {
			if c.W > 0 {
				comps[i] = append(comps[i], c)
			}
		}
	}
	return atoms, comps
}
