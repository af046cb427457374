package transformer

import (
	"compbench/attention"
	"compbench/models"
)

// decoderAllowed is the decoder self-attention mask (attention.Allowed, Shi
// et al. §4.2) for the decoder input ids x whose first n positions are real:
// SepID (= StartID) marks separators and positions from n on are padding.
// Padding is taken from n, not from the ids, so a decode graph ignores
// whatever follows the current position.
func decoderAllowed(kind string, x []int, n int) ([][]bool, error) {
	m, err := attention.ParseMask(kind)
	if err != nil {
		return nil, err
	}
	sep := make([]bool, len(x))
	pad := make([]bool, len(x))
	for i, id := range x {
		sep[i] = i < n && id == models.SepID
		pad[i] = i >= n
	}
	return attention.Allowed(m, sep, pad)
}

// decoderMaskRow is the last row of the decoder mask over x: which of the
// positions 0..len(x)-1 the newest one attends to.
func decoderMaskRow(kind string, x []int) ([]bool, error) {
	if kind == "causal" {
		row := make([]bool, len(x))
		for j := range row {
			row[j] = true
		}
		return row, nil
	}
	full, err := decoderAllowed(kind, x, len(x))
	if err != nil {
		return nil, err
	}
	return full[len(x)-1], nil
}
