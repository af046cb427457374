package engine_test

import (
	"fmt"
	"testing"

	"compbench/engine"
	"compbench/models"
	"compbench/models/lstm"
)

// countingRecurrent is counting over a backend with the recurrent kernels,
// which it forwards as they are.
type countingRecurrent struct {
	*counting
	r engine.RecurrentBackend
}

func (c countingRecurrent) LSTMGates(n, h int, z, hPrev, cPrev, mask, hOut, cOut, tanhC engine.Buf) error {
	return c.r.LSTMGates(n, h, z, hPrev, cPrev, mask, hOut, cOut, tanhC)
}
func (c countingRecurrent) LSTMGatesBack(n, h int, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev engine.Buf) error {
	return c.r.LSTMGatesBack(n, h, gates, tanhC, cPrev, mask, dhOut, dhNext, dcNext, dz, dhPrev, dcPrev)
}
func (c countingRecurrent) AddAttn(r, s, h, nb int, q, keys, va, srcLen, att engine.Buf) error {
	return c.r.AddAttn(r, s, h, nb, q, keys, va, srcLen, att)
}
func (c countingRecurrent) AddAttnBack(r, s, h, nb int, q, keys, va, srcLen, de, dq, dkeys, dvaPart engine.Buf) error {
	return c.r.AddAttnBack(r, s, h, nb, q, keys, va, srcLen, de, dq, dkeys, dvaPart)
}
func (c countingRecurrent) CopyLoss(r, v, s, n int, ignore int32, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt engine.Buf) error {
	return c.r.CopyLoss(r, v, s, n, ignore, logits, zg, att, match, tgt, prob, dLogits, dZg, dAtt)
}
func (c countingRecurrent) Copy2D(rows, cols int, src engine.Buf, ldSrc int, dst engine.Buf, ldDst int) error {
	return c.r.Copy2D(rows, cols, src, ldSrc, dst, ldDst)
}
func (c countingRecurrent) Fill(n int, v float32, y engine.Buf) error { return c.r.Fill(n, v, y) }

// TestLSTMTrainStepTransfers is TestTrainStepTransfers for the LSTM
// models' engine path: a step uploads the batch (ids, lengths, targets,
// the encoder's step masks) and downloads the loss and the gradient norm,
// however deep the model, with either encoder (the Transformer encoder's
// attention mask and positions take the step masks' upload).
func TestLSTMTrainStepTransfers(t *testing.T) {
	perStep := map[string]string{}
	for _, tc := range []struct {
		encoder string
		layers  int
	}{{models.EncoderLSTM, 1}, {models.EncoderLSTM, 3}, {models.EncoderTransformer, 1}, {models.EncoderTransformer, 3}} {
		layers := tc.layers
		t.Run(fmt.Sprintf("%s/%d layers", tc.encoder, layers), func(t *testing.T) {
			cfg := lstm.DefaultConfig("lstm-attention")
			cfg.Dim, cfg.Layers, cfg.Dropout, cfg.SrcVocab, cfg.TgtVocab = 8, layers, 0.1, 12, 10
			cfg.Encoder, cfg.EncoderHeads, cfg.MLPDim = tc.encoder, 2, 16
			m, err := lstm.New(cfg, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			ex := []models.Example{
				{Src: []int{4, 5, 7}, Tgt: []int{4, 8, 6, models.EOSID}},
				{Src: []int{7, 6}, Tgt: []int{9, 5, models.EOSID}},
				{Src: []int{11, 6, 5, 4, 10}, Tgt: []int{4, models.EOSID}},
			}
			batches := []*models.Batch{models.MakeBatch([]*models.Example{&ex[0], &ex[1]}, 2, 4),
				models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 4, 8)}
			cpu := &engine.CPU{BLAS: true}
			be := countingRecurrent{counting: &counting{Backend: cpu}, r: cpu}
			tr, err := lstm.NewTrainer(m, be, adamCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			var counts []string
			for step := 1; step <= 5; step++ {
				be.up, be.down, be.sync = 0, 0, 0
				if _, _, err := tr.Step(batches[step%2], 0.1, step, 1, 1e-3); err != nil {
					t.Fatal(err)
				}
				counts = append(counts, fmt.Sprintf("up %d down %d", be.up, be.down))
				if be.down > 2 {
					t.Errorf("step %d: %d downloads, want at most 2 (loss, gradient norm)", step, be.down)
				}
				if be.up > 6 {
					t.Errorf("step %d: %d uploads, want at most 6 (ids, lengths, targets, masks, norm accumulator)", step, be.up)
				}
			}
			t.Logf("steps 1-5: %v", counts)
			perStep[fmt.Sprint(tc.encoder, layers)] = counts[2] + "; " + counts[3]
		})
	}
	for _, enc := range []string{models.EncoderLSTM, models.EncoderTransformer} {
		if a, b := perStep[enc+"1"], perStep[enc+"3"]; a != b {
			t.Errorf("%s encoder: transfers per step grow with depth: 1 layer %q, 3 layers %q", enc, a, b)
		}
	}
}
