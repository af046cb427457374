package transformer

import (
	"fmt"

	"compbench/engine"
	"compbench/kernels"
	"compbench/models"
)

// The decoding state's steps (decode.go): the logits, the greedy and
// top-k choices made on the backend, and beam reordering of the caches.

// logits is the last step's logits buffer [B, V].
func (d *decoder) logits() (engine.Buf, error) { return d.cur.mc.Buffer(d.cur.step.logits) }

// Step implements models.DecodeState: it downloads the logits [B, V].
func (d *decoder) Step(tokens []int) ([]float32, error) {
	if err := d.forward(tokens); err != nil {
		return nil, err
	}
	out := make([]float32, d.B*d.t.m.Cfg.TgtVocab)
	return out, d.cur.mc.Read(d.cur.step.logits, out)
}

var decodeSkip = kernels.Skip{models.PadID, models.UnkID}

// StepGreedy implements models.Picker.
func (d *decoder) StepGreedy(tokens []int) ([]int, []float64, error) {
	if err := d.forward(tokens); err != nil {
		return nil, nil, err
	}
	B, V, bufs := d.B, d.t.m.Cfg.TgtVocab, &d.t.bufs
	if err := bufs.fitPick(B, 1); err != nil {
		return nil, nil, err
	}
	logits, err := d.logits()
	if err != nil {
		return nil, nil, err
	}
	if err := d.be.LogSoftmax(B, V, logits, bufs.lp.buf); err != nil {
		return nil, nil, err
	}
	if err := d.be.Argmax(B, V, bufs.lp.buf, models.EOSID, decodeSkip, bufs.pick.buf); err != nil {
		return nil, nil, err
	}
	if err := d.be.LogProbAt(B, V, logits, bufs.pick.buf, bufs.pickLP.buf); err != nil {
		return nil, nil, err
	}
	ids32 := make([]int32, B)
	lp := make([]float64, B)
	if err := d.be.DownloadInt(ids32, bufs.pick.buf); err != nil {
		return nil, nil, err
	}
	if err := d.be.DownloadF64(lp, bufs.pickLP.buf); err != nil {
		return nil, nil, err
	}
	return ints(ids32), lp, nil
}

// StepTopK implements models.Picker.
func (d *decoder) StepTopK(tokens []int, k int) ([]int, []float32, error) {
	if k < 1 {
		return nil, nil, fmt.Errorf("decode: top-%d", k)
	}
	if err := d.forward(tokens); err != nil {
		return nil, nil, err
	}
	B, V, bufs := d.B, d.t.m.Cfg.TgtVocab, &d.t.bufs
	if err := bufs.fitPick(B, k); err != nil {
		return nil, nil, err
	}
	logits, err := d.logits()
	if err != nil {
		return nil, nil, err
	}
	if err := d.be.LogSoftmax(B, V, logits, bufs.lp.buf); err != nil {
		return nil, nil, err
	}
	if err := d.be.TopK(B, V, k, bufs.lp.buf, decodeSkip, bufs.topV.buf, bufs.pick.buf); err != nil {
		return nil, nil, err
	}
	ids32 := make([]int32, B*k)
	vals := make([]float32, B*k)
	if err := d.be.DownloadInt(ids32, bufs.pick.buf); err != nil {
		return nil, nil, err
	}
	if err := d.be.Download(vals, bufs.topV.buf); err != nil {
		return nil, nil, err
	}
	return ints(ids32), vals, nil
}

func ints(x []int32) []int {
	out := make([]int, len(x))
	for i, v := range x {
		out[i] = int(v)
	}
	return out
}

// Reorder implements models.DecodeState: the cached rows of every filled
// position are gathered on the backend. An error surfaces at the next step.
func (d *decoder) Reorder(from []int) {
	if d.closed || d.err != nil {
		return
	}
	if len(from) != d.B {
		d.err = fmt.Errorf("decode: reorder of %d rows, want %d", len(from), d.B)
		return
	}
	identity := true
	for i, f := range from {
		if f < 0 || f >= d.B {
			d.err = fmt.Errorf("decode: reorder from row %d of %d", f, d.B)
			return
		}
		identity = identity && f == i
	}
	old := append([]int(nil), d.hist...)
	for i, f := range from {
		copy(d.hist[i*d.maxLen:(i+1)*d.maxLen], old[f*d.maxLen:(f+1)*d.maxLen])
	}
	if identity || d.pos == 0 {
		return
	}
	d.err = d.reorderCaches(from)
}

// reorderCaches gathers the filled rows of every cache into the spare
// buffer and copies them back.
func (d *decoder) reorderCaches(from []int) error {
	B, n, bufs := d.B, d.pos*d.B, &d.t.bufs
	D := d.t.m.Cfg.Dim
	g := make([]int, n) // row j*B+i takes row j*B+from[i]
	for j := 0; j < d.pos; j++ {
		for i, f := range from {
			g[j*B+i] = j*B + f
		}
	}
	if err := d.upload(bufs.order.buf, g); err != nil {
		return err
	}
	for i := range d.t.m.dec {
		for _, name := range []string{cacheKName, cacheVName} {
			c := bufs.get(name, i)
			if err := d.be.Embed(n, D, c, bufs.order.buf, bufs.spare.buf); err != nil {
				return err
			}
			if err := bufs.copy(n*D, bufs.spare.buf, c); err != nil {
				return err
			}
		}
	}
	return nil
}
