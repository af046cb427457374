package structure

import "math"

// The Chernoff exponents of Keysers et al. §2.1: 0.5 (the Bhattacharyya
// coefficient) for atoms, whose distributions should match; 0.1 for
// compounds, where what matters is whether a test compound occurs in train
// at all more than how often.
const (
	AtomAlpha     = 0.5
	CompoundAlpha = 0.1
)

// Chernoff returns C_alpha(P||Q) = sum_k p_k^alpha q_k^(1-alpha), where P
// and Q are a and b normalized; a and b are raw (weighted) counts indexed by
// the same ids. It is 0 when either side is empty.
func Chernoff(a, b []float64, alpha float64) float64 {
	var sa, sb, s float64
	for _, x := range a {
		sa += x
	}
	for _, x := range b {
		sb += x
	}
	if sa <= 0 || sb <= 0 {
		return 0
	}
	n := min(len(a), len(b))
	for k := 0; k < n; k++ {
		if a[k] > 0 && b[k] > 0 {
			s += math.Pow(a[k], alpha) * math.Pow(b[k], 1-alpha)
		}
	}
	return s / (math.Pow(sa, alpha) * math.Pow(sb, 1-alpha))
}

// Divergence is 1 - C_alpha(train || test): D_A with AtomAlpha, D_C with
// CompoundAlpha (Keysers et al. §2.1). It is 1 when either side is empty.
func Divergence(train, test []float64, alpha float64) float64 {
	return 1 - Chernoff(train, test, alpha)
}

// AtomDist sums the atom counts of the examples listed (F_A, unnormalized).
func (ix *Index) AtomDist(examples []int) []float64 {
	d := make([]float64, len(ix.Atoms))
	for _, e := range examples {
		for _, a := range ix.Examples[e].Atoms {
			d[a.ID] += a.W
		}
	}
	return d
}

// CompoundDist sums the compound weights of the examples listed (F_C,
// unnormalized). Unweighted, every compound present in an example counts 1
// there, which is the weighting of §2.1 with all weights set to 1.
func (ix *Index) CompoundDist(examples []int, weighted bool) []float64 {
	d := make([]float64, len(ix.Compounds))
	for _, e := range examples {
		for _, c := range ix.Examples[e].Compounds {
			if weighted {
				d[c.ID] += c.W
			} else {
				d[c.ID]++
			}
		}
	}
	return d
}
