package split

import (
	"math"

	"compbench/data/structure"
)

// pairDiv keeps 1 - C_alpha(train || test) up to date as examples move, so
// a candidate move costs O(its entries): only the terms a_k^alpha b_k^(1-alpha)
// of the moved example's ids change, plus the two totals.
type pairDiv struct {
	alpha  float64
	a, b   []float64 // raw train and test weights per id
	pa, pb []float64 // cached a_k^alpha and b_k^(1-alpha)
	A, B   float64   // totals
	S      float64   // sum_k pa_k pb_k
}

func newPairDiv(n int, alpha float64) *pairDiv {
	return &pairDiv{alpha: alpha, a: make([]float64, n), b: make([]float64, n),
		pa: make([]float64, n), pb: make([]float64, n)}
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
	for _, e := range es {
		k, w := e.ID, sign*e.W
		dT += w
		if !test {
			if p.b[k] > 0 {
				dS += (fastPow(p.a[k]+w, p.alpha) - p.pa[k]) * p.pb[k]
			}
		} else if p.a[k] > 0 {
			dS += p.pa[k] * (fastPow(p.b[k]+w, 1-p.alpha) - p.pb[k])
		}
	}
	if test {
		return p.div(p.A, p.B+dT, p.S+dS)
	}
	return p.div(p.A+dT, p.B, p.S+dS)
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
		k, w := e.ID, sign*e.W
		p.S -= p.pa[k] * p.pb[k]
		if test {
			p.b[k] += w
			if p.b[k] <= eps {
				p.b[k] = 0
			}
			p.B += w
			p.pb[k] = p.pow(p.b[k], 1-p.alpha)
		} else {
			p.a[k] += w
			if p.a[k] <= eps {
				p.a[k] = 0
			}
			p.A += w
			p.pa[k] = p.pow(p.a[k], p.alpha)
		}
		p.S += p.pa[k] * p.pb[k]
	}
}

// adopt copies q's train side into p, whose test side must be empty.
func (p *pairDiv) adopt(q *pairDiv) {
	copy(p.a, q.a)
	copy(p.pa, q.pa)
	p.A = q.A
}

// resum recomputes S from the cached terms, shedding accumulated rounding.
func (p *pairDiv) resum() {
	p.S = 0
	for k := range p.pa {
		p.S += p.pa[k] * p.pb[k]
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
