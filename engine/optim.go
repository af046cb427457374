package engine

import (
	"fmt"
	"math"

	"compbench/kernels"
	"compbench/ops"
)

// Weights hold a model's parameters in backend memory, named as the graph's parameter nodes so machines of every batch shape
// share them (NewSharedMachine).
type Weights struct {
	B Backend
	// Names and Sizes describe the tensors, in the model's order.
	Names []string
	Sizes []int
	// Bufs hold them.
	Bufs []Buf
}

// NewWeights uploads host tensors vals (named names) to b.
func NewWeights(b Backend, names []string, vals [][]float32) (*Weights, error) {
	w := &Weights{B: b, Names: names}
	for i, v := range vals {
		buf, err := b.Alloc(len(v))
		if err != nil {
			w.Free()
			return nil, fmt.Errorf("engine: weight %s: %w", names[i], err)
		}
		w.Bufs = append(w.Bufs, buf)
		w.Sizes = append(w.Sizes, len(v))
		if err := b.Upload(buf, v); err != nil {
			w.Free()
			return nil, fmt.Errorf("engine: weight %s: %w", names[i], err)
		}
	}
	return w, nil
}

// Shared maps names to buffers, for NewSharedMachine.
func (w *Weights) Shared() map[string]Buf {
	m := make(map[string]Buf, len(w.Names))
	for i, n := range w.Names {
		m[n] = w.Bufs[i]
	}
	return m
}

// Download copies the weights back into host tensors vals.
func (w *Weights) Download(vals [][]float32) error {
	for i, b := range w.Bufs {
		if err := w.B.Download(vals[i], b); err != nil {
			return fmt.Errorf("engine: weight %s: %w", w.Names[i], err)
		}
	}
	return nil
}

// Free releases the buffers.
func (w *Weights) Free() {
	for _, b := range w.Bufs {
		w.B.Free(b)
	}
	w.Bufs = nil
}

// Adam is ops.AdamStep and ops.ClipGlobalNorm on backend buffers: the
// moments stay in device memory and each step moves only the gradient norm
// (8 bytes) to the host.
type Adam struct {
	B   Backend
	Cfg kernels.AdamParams
	// T is the number of updates applied.
	T int
	// M and V are the moments, one per weight.
	M, V  []Buf
	sizes []int
	acc   Buf
	lists *multiLists // on a MultiTensor backend (optim_multi.go)
}

// NewAdam makes zero moments for tensors of the given sizes.
func NewAdam(b Backend, sizes []int, c ops.AdamConfig) (*Adam, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := &Adam{B: b, Cfg: kernels.AdamParams{Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps, WeightDecay: c.WeightDecay}, sizes: sizes}
	acc, err := b.AllocF64(1)
	if err != nil {
		return nil, err
	}
	a.acc = acc
	for _, n := range sizes {
		m, err := b.Alloc(n)
		if err != nil {
			return nil, err
		}
		v, err := b.Alloc(n)
		if err != nil {
			return nil, err
		}
		a.M, a.V = append(a.M, m), append(a.V, v)
	}
	return a, nil
}

// Load uploads host moments (resuming a run) and the update count.
func (a *Adam) Load(m, v [][]float32, t int) error {
	for i := range a.M {
		if err := a.B.Upload(a.M[i], m[i]); err != nil {
			return err
		}
		if err := a.B.Upload(a.V[i], v[i]); err != nil {
			return err
		}
	}
	a.T = t
	return nil
}

// Download copies the moments into host slices (for a checkpoint).
func (a *Adam) Download(m, v [][]float32) error {
	for i := range a.M {
		if err := a.B.Download(m[i], a.M[i]); err != nil {
			return err
		}
		if err := a.B.Download(v[i], a.V[i]); err != nil {
			return err
		}
	}
	return nil
}

// ClipGlobalNorm scales grads in place so their global L2 norm is at most
// limit (0: only measure) and returns the norm before clipping, exactly as
// ops.ClipGlobalNorm: squares summed in float64 in tensor order.
func (a *Adam) ClipGlobalNorm(grads []Buf, limit float32) (float32, error) {
	if len(grads) != len(a.sizes) {
		return 0, fmt.Errorf("engine: %d gradients for %d weights", len(grads), len(a.sizes))
	}
	if err := a.B.UploadF64(a.acc, []float64{0}); err != nil {
		return 0, err
	}
	l := a.multi()
	var gt Tensors
	if l != nil {
		var err error
		if gt, err = l.gradTensors(grads, a.sizes); err != nil {
			return 0, err
		}
		if err := l.mt.SumSquaresMulti(gt, a.acc); err != nil {
			return 0, err
		}
	} else {
		for i, g := range grads {
			if err := a.B.SumSquares(a.sizes[i], g, a.acc); err != nil {
				return 0, err
			}
		}
	}
	var sq [1]float64
	if err := a.B.DownloadF64(sq[:], a.acc); err != nil {
		return 0, err
	}
	norm := float32(math.Sqrt(sq[0]))
	if limit <= 0 || norm <= limit || math.IsNaN(float64(norm)) || math.IsInf(float64(norm), 0) {
		return norm, nil
	}
	if l != nil {
		return norm, l.mt.ClipByNormMulti(gt, a.acc, limit)
	}
	for i, g := range grads {
		if err := a.B.ClipByNorm(a.sizes[i], a.acc, limit, g); err != nil {
			return 0, err
		}
	}
	return norm, nil
}

// Step applies one Adam update with learning rate lr to params.
func (a *Adam) Step(params, grads []Buf, lr float32) error {
	if len(params) != len(a.sizes) || len(grads) != len(a.sizes) {
		return fmt.Errorf("engine: %d weights and %d gradients for %d moments", len(params), len(grads), len(a.sizes))
	}
	a.T++
	if l := a.multi(); l != nil {
		gt, err := l.gradTensors(grads, a.sizes)
		if err != nil {
			return err
		}
		pt, mt, vt, err := l.paramTensors(a, params)
		if err != nil {
			return err
		}
		return l.mt.AdamMulti(a.Cfg, lr, a.T, pt, gt, mt, vt)
	}
	for i := range params {
		if err := a.B.Adam(a.sizes[i], a.Cfg, lr, a.T, params[i], grads[i], a.M[i], a.V[i]); err != nil {
			return err
		}
	}
	return nil
}

// Free releases the moments.
func (a *Adam) Free() {
	if a.lists != nil {
		a.lists.free()
		a.lists = nil
	}
	for i := range a.M {
		a.B.Free(a.M[i])
		a.B.Free(a.V[i])
	}
	a.B.Free(a.acc)
	a.M, a.V = nil, nil
}
