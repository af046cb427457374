package eval

import (
	"errors"
	"fmt"
)

// Matrix is the per-example correctness of several models: row i is test
// example i, column j model j.
type Matrix struct {
	// N is the number of examples, M the number of models.
	N, M int
	// Bits[i*M+j] is whether model j got example i right.
	Bits []bool
}

// NewMatrix builds a matrix from per-model correctness columns of equal length.
func NewMatrix(cols [][]bool) (*Matrix, error) {
	if len(cols) == 0 {
		return nil, errors.New("no models")
	}
	n := len(cols[0])
	m := &Matrix{N: n, M: len(cols), Bits: make([]bool, n*len(cols))}
	for j, c := range cols {
		if len(c) != n {
			return nil, fmt.Errorf("model %d has %d examples, model 1 has %d", j+1, len(c), n)
		}
		for i, b := range c {
			m.Bits[i*m.M+j] = b
		}
	}
	return m, nil
}

// Correct counts the models that got example i right.
func (m *Matrix) Correct(i int) int {
	c := 0
	for _, b := range m.Bits[i*m.M : (i+1)*m.M] {
		if b {
			c++
		}
	}
	return c
}

// Accuracies is each model's accuracy.
func (m *Matrix) Accuracies() []float64 {
	acc := make([]float64, m.M)
	for i := range m.N {
		for j, b := range m.Bits[i*m.M : (i+1)*m.M] {
			if b {
				acc[j]++
			}
		}
	}
	for j := range acc {
		acc[j] /= float64(max(m.N, 1))
	}
	return acc
}

// Agreement is the fraction of examples on which at least k of the M
// models agree, i.e. at least k are right or at least k are wrong (Bogin
// et al. §3: k = M is "all agree", k = ⌊M/2⌋+1 the majority "3+/4").
func (m *Matrix) Agreement(k int) float64 {
	if m.N == 0 {
		return 0
	}
	hit := 0
	for i := range m.N {
		c := m.Correct(i)
		if c >= k || m.M-c >= k {
			hit++
		}
	}
	return float64(hit) / float64(m.N)
}

// RandomAgreement is the agreement rate expected if each model j were right
// on an independent random subset of a fraction acc[j] of the examples
// (Bogin et al. Table 2, "random agreement"): P(#right >= k or #wrong >= k)
// with #right Poisson-binomial.
func RandomAgreement(acc []float64, k int) float64 {
	m := len(acc)
	// dist[c] = P(exactly c models right)
	dist := make([]float64, m+1)
	dist[0] = 1
	for j, p := range acc {
		for c := j + 1; c >= 0; c-- {
			v := dist[c] * (1 - p)
			if c > 0 {
				v += dist[c-1] * p
			}
			dist[c] = v
		}
	}
	total := 0.0
	for c, pr := range dist {
		if c >= k || m-c >= k {
			total += pr
		}
	}
	return total
}

// Majority is the gold easiness of §5.1: 1 when more than half the models
// are right, 0 when more than half are wrong, -1 on a tie (dropped).
func (m *Matrix) Majority(i int) int8 {
	c := m.Correct(i)
	switch {
	case 2*c > m.M:
		return 1
	case 2*c < m.M:
		return 0
	}
	return -1
}
