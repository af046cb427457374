package models

import (
	"fmt"
	"math"

	"compbench/vecmath"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// Width is the batch width for sequences of at most n tokens: n rounded
// up to a multiple of 8 (so that few graphs are built), at most n_positions.
func (m *GPT2) Width(n int) int {
	return min(RoundUp(n, 8), m.Cfg.NPositions)
}

// TokenLogProbs returns, for each sequence s, log p(s[t] | s[:t]) for every
// t from first[i] (at least 1) to the end. The sequences run as one batch of
// width Width(longest); batch may be larger than len(seqs) to reuse a
// graph (the spare rows are empty). Results do not depend on the batch.
func (m *GPT2) TokenLogProbs(seqs [][]int, first []int, batch int) ([][]float64, error) {
	if len(seqs) != len(first) || len(seqs) == 0 || batch < len(seqs) {
		return nil, fmt.Errorf("token log-probs: %d sequences, %d starts, batch %d", len(seqs), len(first), batch)
	}
	longest := 0
	for i, s := range seqs {
		if len(s) > m.Cfg.NPositions {
			return nil, fmt.Errorf("sequence %d has %d tokens, more than n_positions %d", i, len(s), m.Cfg.NPositions)
		}
		if first[i] < 1 || first[i] > len(s) {
			return nil, fmt.Errorf("sequence %d: first scored token %d not in [1, %d]", i, first[i], len(s))
		}
		for _, id := range s {
			if id < 0 || id >= m.Cfg.VocabSize {
				return nil, fmt.Errorf("sequence %d: token id %d outside the vocabulary of %d", i, id, m.Cfg.VocabSize)
			}
		}
		longest = max(longest, len(s))
	}
	T := m.Width(longest)
	c, err := m.inferGraph(batch, T)
	if err != nil {
		return nil, err
	}
	// Pad with the last id, GPT-2's <|endoftext|>; the mask makes the choice
	// irrelevant.
	hidden, err := m.forwardInfer(c, seqs, m.Cfg.VocabSize-1) // [B*T, E]
	if err != nil {
		return nil, fmt.Errorf("GPT-2 forward: %w", err)
	}
	E := m.Cfg.NEmbd
	// Rows whose next token is scored: row t of sequence i predicts s[t+1].
	var rows []int
	var targets []int
	out := make([][]float64, len(seqs))
	for i, s := range seqs {
		pad := T - len(s)
		for t := first[i]; t < len(s); t++ {
			rows = append(rows, i*T+pad+t-1)
			targets = append(targets, s[t])
		}
		out[i] = make([]float64, 0, len(s)-first[i])
	}
	lp := m.outputLogProbs(hidden, rows, targets, E)
	k := 0
	for i, s := range seqs {
		for t := first[i]; t < len(s); t++ {
			out[i] = append(out[i], lp[k])
			k++
		}
	}
	return out, nil
}

// outputLogProbs computes log softmax(h · wte^T)[target] for the given rows
// of hidden [*, E], a chunk of rows at a time so the [rows, V] logits never
// exist at once.
func (m *GPT2) outputLogProbs(hidden []float32, rows, targets []int, E int) []float64 {
	V := m.Cfg.VocabSize
	wte := m.weights("wte.weight") // [V, E]
	impl := G.WhichBLAS()          // the BLAS chosen for the graphs (blas.Use)
	// 256 rows (51 MB of logits for GPT-2's vocabulary): with 64, one
	// thread scored 10% fewer tokens/s (OpenBLAS runs a short-and-wide
	// product less well); 512 gained nothing more.
	const chunk = 256
	if len(m.logits) < chunk*(V+E) {
		m.logits = make([]float32, chunk*(V+E))
	}
	logits, h := m.logits[:chunk*V], m.logits[chunk*V:] // [chunk, V], [chunk, E]
	out := make([]float64, len(rows))
	for start := 0; start < len(rows); start += chunk {
		n := min(chunk, len(rows)-start)
		for j := 0; j < n; j++ {
			copy(h[j*E:(j+1)*E], hidden[rows[start+j]*E:(rows[start+j]+1)*E])
		}
		impl.Sgemm(blas.NoTrans, blas.Trans, n, V, E, 1, h[:n*E], E, wte, E, 0, logits[:n*V], V) // [n, V]
		for j := 0; j < n; j++ {
			out[start+j] = logSoftmaxAt(logits[j*V:(j+1)*V], targets[start+j])
		}
	}
	return out
}

// logSoftmaxAt returns log softmax(x)[i]: x_i − max − log Σ e^(x−max),
// the exponentials in float32 and their sum in float64 (vecmath.ExpSum,
// as kernels.LogProbAtRef and so the engine's CPU backend).
func logSoftmaxAt(x []float32, i int) float64 {
	mx, sum := vecmath.ExpSum(x)
	return float64(x[i]-mx) - math.Log(sum)
}
