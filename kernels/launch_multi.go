//go:build gpu || gpuemu

package kernels

import (
	"fmt"
	"math"
	"unsafe"
)

// Tensors lists device buffers for the multi-tensor kernels, which run the
// optimizer over every weight tensor of a model in one launch each: a
// device array of the buffers' pointers and one of the prefix sums of
// their lengths.
type Tensors struct {
	n     int
	total int64
	ptrs  Buf // [n] device pointers
	offs  Buf // [n+1] int64: tensor t is elements offs[t] to offs[t+1] of the concatenation
}

// NewTensors uploads the pointers of bufs and their lengths in 4-byte
// elements (sizes). The buffers must outlive the list; FreeTensors frees it.
func (d *Device) NewTensors(bufs []Buf, sizes []int) (Tensors, error) {
	if len(bufs) == 0 || len(bufs) != len(sizes) {
		return Tensors{}, fmt.Errorf("cuda: tensor list of %d buffers and %d sizes", len(bufs), len(sizes))
	}
	ptrs := make([]uint64, len(bufs))
	offs := make([]int64, len(bufs)+1)
	for i, b := range bufs {
		if sizes[i] < 0 {
			return Tensors{}, fmt.Errorf("cuda: tensor %d: size %d", i, sizes[i])
		}
		if err := need(fmt.Sprintf("tensor %d", i), b, sizes[i]); err != nil {
			return Tensors{}, err
		}
		ptrs[i] = uint64(b.ptr)
		offs[i+1] = offs[i] + int64(sizes[i])
	}
	if offs[len(bufs)] > math.MaxInt32*int64(elemBlock) {
		return Tensors{}, fmt.Errorf("cuda: tensor list of %d elements is too large", offs[len(bufs)])
	}
	t := Tensors{n: len(bufs), total: offs[len(bufs)]}
	var err error
	if t.ptrs, err = d.AllocBytes(int64(len(ptrs)) * 8); err != nil {
		return Tensors{}, err
	}
	if t.offs, err = d.AllocBytes(int64(len(offs)) * 8); err != nil {
		d.Free(t.ptrs)
		return Tensors{}, err
	}
	if err = d.copyIn(t.ptrs, unsafe.Pointer(&ptrs[0]), int64(len(ptrs))*8); err == nil {
		err = d.copyIn(t.offs, unsafe.Pointer(&offs[0]), int64(len(offs))*8)
	}
	if err != nil {
		d.FreeTensors(t)
		return Tensors{}, err
	}
	return t, nil
}

// FreeTensors frees the list (not the buffers it names).
func (d *Device) FreeTensors(t Tensors) error {
	err := d.Free(t.ptrs)
	if e := d.Free(t.offs); err == nil {
		err = e
	}
	return err
}

// SumSquaresMulti adds Σ x² over every tensor of t to the float64 acc[0],
// as SumSquares on each in turn would up to the order of the float64 sum
// (block sums, added in a fixed order).
func (d *Device) SumSquaresMulti(t Tensors, acc Buf) error {
	if err := need("sum squares acc", acc, 2); err != nil {
		return err
	}
	nb := max(min(blocks(int(t.total), elemBlock), 1024), 1)
	part, err := d.scratchBuf(int64(nb) * 8) // [nb] float64 block sums
	if err != nil {
		return err
	}
	if err := d.launch("sum_squares_multi", dim3{nb, 1, 1}, dim3{elemBlock, 1, 1}, 0, t.n, t.ptrs, t.offs, part); err != nil {
		return err
	}
	return d.launch("sum_parts", dim3{1, 1, 1}, dim3{elemBlock, 1, 1}, 0, nb, part, acc)
}

// ClipByNormMulti is ClipByNorm on every tensor of t.
func (d *Device) ClipByNormMulti(t Tensors, sq Buf, limit float32) error {
	if err := need("clip sq", sq, 2); err != nil {
		return err
	}
	if math.IsNaN(float64(limit)) {
		return fmt.Errorf("cuda: clip limit NaN")
	}
	return d.elementwise("clip_by_norm_multi", int(t.total), t.n, sq, limit, t.ptrs, t.offs)
}

// AdamMulti is Adam on every tensor: param, grad, m and v must list
// buffers of the same sizes in the same order.
func (d *Device) AdamMulti(p AdamParams, lr float32, step int, param, grad, m, v Tensors) error {
	if step < 1 {
		return fmt.Errorf("cuda: adam step %d, want >= 1", step)
	}
	for _, o := range []Tensors{grad, m, v} {
		if o.n != param.n || o.total != param.total {
			return fmt.Errorf("cuda: adam: tensor lists of %d/%d and %d/%d tensors/elements", param.n, param.total, o.n, o.total)
		}
	}
	s := AdamStepScalars(p, lr, step)
	return d.elementwise("adam_step_multi", int(param.total), param.n, p.Beta1, p.Beta2, s.Alpha, s.Eps, s.Decay,
		param.ptrs, grad.ptrs, m.ptrs, v.ptrs, param.offs)
}
