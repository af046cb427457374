package sweep

import (
	"fmt"

	"compbench/models"
	"compbench/train"
)

// predictBatch is predict's default --batch, which a cell's predict stage
// keeps; decoding pads every batch to it.
const predictBatch = 64

// CellMemory is the working set of one cell's training and decoding.
type CellMemory struct {
	Name  string
	Parts []train.MemPart
}

// Memory is each cell's working set on the smallest data (one-token
// sources and targets, the special tokens for a vocabulary), so that a
// model dimension or a beam of a million, a typing slip that would fail
// cell after cell or end the process out of memory, is refused before any
// cell runs; each cell's train and predict check the data's real sizes
// again. Cells of pretrained models are left out: train --init checks the
// folder's size. On a cell whose config cannot be built it returns the
// cells before it and the error.
func (s *Spec) Memory() ([]CellMemory, error) {
	var out []CellMemory
	for _, c := range s.Cells() {
		cfg, err := s.CellConfig(c)
		if err != nil {
			return out, fmt.Errorf("cell %s: %w", c.Name, err)
		}
		m := cfg.Model
		if models.IsPretrained(m.Variant) {
			continue
		}
		const vocab = 4 // padding, start, end and unknown
		out = append(out, CellMemory{c.Name, []train.MemPart{
			train.WeightsMemory(m, vocab, vocab, true),
			train.ActivationsMemory(m, cfg.BatchRows(), 1, 2, vocab),
			train.DecodeMemory(m, predictBatch*max(s.Beam, 1), 1, m.MaxTgtLen, vocab, "beam", "model.max_tgt_len"),
		}})
	}
	return out, nil
}
