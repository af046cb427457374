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
