package main

import (
	"compbench/models"
	"compbench/sweep"
)

// predictBatch is predict's default --batch, which the sweep's predict
// stage keeps; decoding pads every batch to it.
const predictBatch = 64

// checkSweepCells runs, before any cell, the checks of a sweep file that
// need this binary and this machine (sweep.Spec.Validate has checked the
// rest), as usage errors: the device must be one this binary was built
// for, and no cell's training or decoding may outgrow the machine's memory
// even on the smallest data (one-token sources and targets, the special
// tokens for a vocabulary). A model dimension of a million or a beam of a
// million is a typing slip that would otherwise fail cell after cell, or
// end the process out of memory. Each cell's train and predict check the
// data's real sizes again.
func checkSweepCells(spec *sweep.Spec) error {
	if _, err := parseDevice(spec.Device); err != nil {
		return usagef("sweep: %v", err)
	}
	for _, c := range spec.Cells() {
		cfg, err := spec.CellConfig(c)
		if err != nil {
			return usagef("sweep: cell %s: %v", c.Name, err)
		}
		m := cfg.Model
		if models.IsPretrained(m.Variant) {
			continue // the folder's size is checked by train --init
		}
		const vocab = 4 // padding, start, end and unknown
		parts := []memPart{
			weightsPart(m, vocab, vocab, true),
			activationsPart(m, batchRows(cfg), 1, 2, vocab),
			decodePart(m, predictBatch*max(spec.Beam, 1), 1, m.MaxTgtLen, vocab, "beam or model.max_tgt_len"),
		}
		if err := checkMemory("sweep: cell "+c.Name, parts...); err != nil {
			return err
		}
	}
	return nil
}
