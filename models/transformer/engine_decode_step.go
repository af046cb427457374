package transformer

import (
	"fmt"

	"compbench/kernels"
	"compbench/models"
)

// The engine decoder's steps (engine_decode.go): the logits, the greedy
// and top-k choices made on the backend, and beam reordering of the caches.

// Step implements models.DecodeState: it downloads the logits [B, V].
func (s *engineDecoder) Step(tokens []int) ([]float32, error) {
	if err := s.forward(tokens); err != nil {
		return nil, err
	}
	out := make([]float32, s.B*s.t.m.Cfg.TgtVocab)
	return out, s.be.Download(out, s.logits)
}

var decodeSkip = kernels.Skip{models.PadID, models.UnkID}

// StepGreedy implements models.Picker.
func (s *engineDecoder) StepGreedy(tokens []int) ([]int, []float64, error) {
	if err := s.forward(tokens); err != nil {
		return nil, nil, err
	}
	B, V := s.B, s.t.m.Cfg.TgtVocab
	if err := s.ensurePick(1); err != nil {
		return nil, nil, err
	}
	if err := s.be.LogSoftmax(B, V, s.logits, s.lp); err != nil {
		return nil, nil, err
	}
	if err := s.be.Argmax(B, V, s.lp, models.EOSID, decodeSkip, s.pick); err != nil {
		return nil, nil, err
	}
	if err := s.be.LogProbAt(B, V, s.logits, s.pick, s.pickLP); err != nil {
		return nil, nil, err
	}
	ids32 := make([]int32, B)
	lp := make([]float64, B)
	if err := s.be.DownloadInt(ids32, s.pick); err != nil {
		return nil, nil, err
	}
	if err := s.be.DownloadF64(lp, s.pickLP); err != nil {
		return nil, nil, err
	}
	return ints(ids32), lp, nil
}

// StepTopK implements models.Picker.
func (s *engineDecoder) StepTopK(tokens []int, k int) ([]int, []float32, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("decode: top-%d", k)
	}
	if err := s.forward(tokens); err != nil {
		return nil, nil, err
	}
	B, V := s.B, s.t.m.Cfg.TgtVocab
	if err := s.ensurePick(k); err != nil {
		return nil, nil, err
	}
	if err := s.be.LogSoftmax(B, V, s.logits, s.lp); err != nil {
		return nil, nil, err
	}
	if err := s.be.TopK(B, V, k, s.lp, decodeSkip, s.topV, s.pick); err != nil {
		return nil, nil, err
	}
	ids32 := make([]int32, B*k)
	vals := make([]float32, B*k)
	if err := s.be.DownloadInt(ids32, s.pick); err != nil {
		return nil, nil, err
	}
	if err := s.be.Download(vals, s.topV); err != nil {
		return nil, nil, err
	}
	return ints(ids32), vals, nil
}

// ensurePick sizes the choice buffers for k per row.
func (s *engineDecoder) ensurePick(k int) error {
	if s.topK >= k {
		return nil
	}
	var err error
	if s.pick, err = s.allocInt(s.B * k); err != nil {
		return err
	}
	if s.topV, err = s.alloc(s.B * k); err != nil {
		return err
	}
	s.topK = k
	return nil
}

func ints(x []int32) []int {
	out := make([]int, len(x))
	for i, v := range x {
		out[i] = int(v)
	}
	return out
}

// Reorder implements models.DecodeState: the cached rows of every filled position
// are gathered on the backend. An error surfaces at the next step.
func (s *engineDecoder) Reorder(from []int) {
	if s.closed || s.err != nil {
		return
	}
	if len(from) != s.B {
		s.err = fmt.Errorf("decode: reorder of %d rows, want %d", len(from), s.B)
		return
	}
	identity := true
	for i, f := range from {
		if f < 0 || f >= s.B {
			s.err = fmt.Errorf("decode: reorder from row %d of %d", f, s.B)
			return
		}
		identity = identity && f == i
	}
	old := append([]int(nil), s.hist...)
	for i, f := range from {
		copy(s.hist[i*s.maxLen:(i+1)*s.maxLen], old[f*s.maxLen:(f+1)*s.maxLen])
	}
	if identity || s.pos == 0 {
		return
	}
	s.err = s.reorderCaches(from)
}

func (s *engineDecoder) reorderCaches(from []int) error {
	B, D, n := s.B, s.t.m.Cfg.Dim, s.pos*s.B
	var err error
	if s.gather == nil {
		if s.gather, err = s.allocInt(s.maxLen * B); err != nil {
			return err
		}
	}
	g := make([]int, n) // row j*B+i takes row j*B+from[i]
	for j := 0; j < s.pos; j++ {
		for i, f := range from {
			g[j*B+i] = j*B + f
		}
	}
	if err := s.uploadIDs(s.gather, g); err != nil {
		return err
	}
	for i := range s.layers {
		lc := &s.layers[i]
		if lc.spareK == nil {
			if lc.spareK, err = s.alloc(s.maxLen * B * D); err != nil {
				return err
			}
			if lc.spareV, err = s.alloc(s.maxLen * B * D); err != nil {
				return err
			}
		}
		if err := s.be.Embed(n, D, lc.k, s.gather, lc.spareK); err != nil {
			return err
		}
		if err := s.be.Embed(n, D, lc.v, s.gather, lc.spareV); err != nil {
			return err
		}
		lc.k, lc.spareK = lc.spareK, lc.k
		lc.v, lc.spareV = lc.spareV, lc.v
	}
	return nil
}
