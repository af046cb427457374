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
				dS += (p.pow(p.a[k]+w, p.alpha) - p.pa[k]) * p.pb[k]
			}
		} else if p.a[k] > 0 {
			dS += p.pa[k] * (p.pow(p.b[k]+w, 1-p.alpha) - p.pb[k])
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
