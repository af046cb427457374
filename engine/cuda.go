//go:build gpu || gpuemu

package engine

import (
	"fmt"
	"os"

	"compbench/kernels"
)

// CUDABuilt says whether this binary has the CUDA backend (build tag gpu).
const CUDABuilt = true

// CUDA runs the kernels on one GPU (package kernels' Device): buffers are
// device memory, launches queue on the device's one stream, and downloads
// wait for them.
type CUDA struct {
	// Dev is the open device.
	Dev  *kernels.Device
	ord  int
	gemm kernels.GemmChoice
}

// openCUDA opens GPU ordinal with the product kernel that COMPBENCH_GEMM
// asks for (kernels.ChooseGemm: auto is cuBLAS where it loads, else
// compbench's kernel); a mode that cannot run fails here.
func openCUDA(ordinal int) (Backend, error) {
	env := os.Getenv("COMPBENCH_GEMM")
	mode, err := kernels.ParseGemmMode(env)
	if err != nil {
		return nil, fmt.Errorf("COMPBENCH_GEMM: %w", err)
	}
	if mode == kernels.GemmCublas {
		// Before the device: the missing library is the whole story.
		if _, err := kernels.LoadCublas(); err != nil {
			return nil, fmt.Errorf("COMPBENCH_GEMM=cublas: %w", err)
		}
	}
	d, err := kernels.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("cuda:%d: %w", ordinal, err)
	}
	choice, err := kernels.ChooseGemm(mode, d.TensorCores(), kernels.LoadCublas)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("cuda:%d: COMPBENCH_GEMM=%s: %w", ordinal, mode, err)
	}
	d.GemmKind = choice.Mode
	return &CUDA{Dev: d, ord: ordinal, gemm: choice}, nil
}

// DeviceMemory returns GPU d's free and total memory in bytes, queried
// without opening a backend.
func DeviceMemory(d Device) (free, total int64, err error) {
	if !d.CUDA {
		return 0, 0, fmt.Errorf("%s is not a GPU", d)
	}
	free, total, err = kernels.MemInfo(d.Ordinal)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", d, err)
	}
	return free, total, nil
}

// GemmChoice is the product kernel the backend runs and why.
func (c *CUDA) GemmChoice() kernels.GemmChoice { return c.gemm }

// Close releases the device.
func (c *CUDA) Close() error { return c.Dev.Close() }

// Name implements Backend.
func (c *CUDA) Name() string { return fmt.Sprintf("cuda:%d %s", c.ord, c.Dev) }

func kb(b Buf) kernels.Buf {
	if b == nil {
		return kernels.Buf{}
	}
	return b.(kernels.Buf)
}

func (c *CUDA) Alloc(n int) (Buf, error)    { return c.Dev.Alloc(n) }
func (c *CUDA) AllocInt(n int) (Buf, error) { return c.Dev.Alloc(n) }
func (c *CUDA) AllocF64(n int) (Buf, error) { return c.Dev.AllocBytes(int64(n) * 8) }

// View implements Backend; the view runs to the end of b (kernels bound
// their reads by their sizes).
func (c *CUDA) View(b Buf, off, n int) Buf { return kb(b).At(off) }
func (c *CUDA) Free(b Buf)                 { c.Dev.Free(kb(b)) }
func (c *CUDA) Sync() error                { return c.Dev.Sync() }

func (c *CUDA) Upload(dst Buf, src []float32) error      { return c.Dev.Upload(kb(dst), src) }
func (c *CUDA) UploadInt(dst Buf, src []int32) error     { return c.Dev.UploadInt32(kb(dst), src) }
func (c *CUDA) UploadF64(dst Buf, src []float64) error   { return c.Dev.UploadFloat64(kb(dst), src) }
func (c *CUDA) Download(dst []float32, src Buf) error    { return c.Dev.Download(dst, kb(src)) }
func (c *CUDA) DownloadF64(dst []float64, src Buf) error { return c.Dev.DownloadFloat64(dst, kb(src)) }

func (c *CUDA) Gemm(p kernels.GemmParams, a, b, cc Buf) error {
	return c.Dev.Gemm(p, kb(a), kb(b), kb(cc))
}
func (c *CUDA) Binary(op kernels.BinOp, n int, a Buf, as int, b Buf, bs int, y Buf) error {
	return c.Dev.Binary(op, n, kb(a), as, kb(b), bs, kb(y))
}
func (c *CUDA) AddBias(n, d int, x, b, y Buf) error { return c.Dev.AddBias(n, d, kb(x), kb(b), kb(y)) }
func (c *CUDA) RepeatRows(n, d int, b, y Buf) error { return c.Dev.RepeatRows(n, d, kb(b), kb(y)) }
func (c *CUDA) SumRows(n, d int, x, y Buf) error    { return c.Dev.SumRows(n, d, kb(x), kb(y)) }
func (c *CUDA) ReLU(n int, x, y Buf) error          { return c.Dev.ReLU(n, kb(x), kb(y)) }
func (c *CUDA) ReLUGrad(n int, y, dy, dx Buf) error { return c.Dev.ReLUGrad(n, kb(y), kb(dy), kb(dx)) }
func (c *CUDA) GELU(n int, x, y Buf) error          { return c.Dev.GELU(n, kb(x), kb(y)) }
func (c *CUDA) GELUGrad(n int, x, dy, dx Buf) error { return c.Dev.GELUGrad(n, kb(x), kb(dy), kb(dx)) }
func (c *CUDA) GELUErf(n int, x, y Buf) error       { return c.Dev.GELUErf(n, kb(x), kb(y)) }
func (c *CUDA) GELUErfGrad(n int, x, dy, dx Buf) error {
	return c.Dev.GELUErfGrad(n, kb(x), kb(dy), kb(dx))
}
func (c *CUDA) Transpose2D(rows, cols int, x, y Buf) error {
	return c.Dev.Transpose2D(rows, cols, kb(x), kb(y))
}
func (c *CUDA) Embed(n, d int, table, ids, y Buf) error {
	return c.Dev.Embed(n, d, kb(table), kb(ids), kb(y))
}
func (c *CUDA) EmbedGrad(v, d, n int, dy, ids, dtable Buf) error {
	return c.Dev.EmbedGrad(v, d, n, kb(dy), kb(ids), kb(dtable))
}
func (c *CUDA) RelBias(nb, h, tq, tk int, table, buckets, y Buf) error {
	return c.Dev.RelBias(nb, h, tq, tk, kb(table), kb(buckets), kb(y))
}
func (c *CUDA) RelBiasGrad(nb, h, tq, tk int, dy, buckets, dtable Buf) error {
	return c.Dev.RelBiasGrad(nb, h, tq, tk, kb(dy), kb(buckets), kb(dtable))
}
func (c *CUDA) LayerNorm(n, d int, eps float32, x, gamma, beta, y Buf) error {
	return c.Dev.LayerNorm(n, d, eps, kb(x), kb(gamma), kb(beta), kb(y))
}
func (c *CUDA) LayerNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error {
	return c.Dev.LayerNormGradX(n, d, eps, kb(x), kb(gamma), kb(dy), kb(dx))
}
func (c *CUDA) LayerNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error {
	return c.Dev.LayerNormGradGamma(n, d, eps, kb(x), kb(dy), kb(dgamma))
}
func (c *CUDA) RMSNorm(n, d int, eps float32, x, gamma, y Buf) error {
	return c.Dev.RMSNorm(n, d, eps, kb(x), kb(gamma), kb(y))
}
func (c *CUDA) RMSNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error {
	return c.Dev.RMSNormGradX(n, d, eps, kb(x), kb(gamma), kb(dy), kb(dx))
}
func (c *CUDA) RMSNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error {
	return c.Dev.RMSNormGradGamma(n, d, eps, kb(x), kb(dy), kb(dgamma))
}
func (c *CUDA) LayerNormGradBeta(n, d int, dy, dbeta Buf) error {
	return c.Dev.LayerNormGradBeta(n, d, kb(dy), kb(dbeta))
}
func (c *CUDA) AttnSoftmax(s kernels.AttnShape, x, mask Buf, mb kernels.Bcast, bias Buf, bb kernels.Bcast, y Buf) error {
	return c.Dev.AttnSoftmax(s, kb(x), kb(mask), mb, kb(bias), bb, kb(y))
}
func (c *CUDA) AttnSoftmaxGrad(rows, tk int, p, dp, ds Buf) error {
	return c.Dev.AttnSoftmaxGrad(rows, tk, kb(p), kb(dp), kb(ds))
}
func (c *CUDA) SumTo(s kernels.AttnShape, to kernels.Bcast, x, y Buf) error {
	return c.Dev.SumTo(s, to, kb(x), kb(y))
}
func (c *CUDA) SoftmaxCE(n, v int, p kernels.CEParams, x, t, loss Buf) error {
	return c.Dev.SoftmaxCE(n, v, p, kb(x), kb(t), kb(loss))
}
func (c *CUDA) SoftmaxCEGrad(n, v int, p kernels.CEParams, x, t, dl, dx Buf) error {
	return c.Dev.SoftmaxCEGrad(n, v, p, kb(x), kb(t), kb(dl), kb(dx))
}
func (c *CUDA) Dropout(n int, p kernels.DropoutParams, x, y, mask Buf) error {
	return c.Dev.Dropout(n, p, kb(x), kb(y), kb(mask))
}
func (c *CUDA) DropoutGrad(n int, dy, mask, dx Buf) error {
	return c.Dev.DropoutGrad(n, kb(dy), kb(mask), kb(dx))
}
func (c *CUDA) LogProbAt(n, v int, x, t, out Buf) error {
	return c.Dev.LogProbAt(n, v, kb(x), kb(t), kb(out))
}
func (c *CUDA) Adam(n int, p kernels.AdamParams, lr float32, step int, param, grad, m, v Buf) error {
	return c.Dev.Adam(n, p, lr, step, kb(param), kb(grad), kb(m), kb(v))
}
func (c *CUDA) SumSquares(n int, x, acc Buf) error { return c.Dev.SumSquares(n, kb(x), kb(acc)) }

var _ MultiTensor = (*CUDA)(nil)

// NewTensors and the other MultiTensor methods run the optimizer over every
// weight tensor in one launch each (optim_multi.go).
func (c *CUDA) NewTensors(bufs []Buf, sizes []int) (Tensors, error) {
	kbs := make([]kernels.Buf, len(bufs))
	for i, b := range bufs {
		kbs[i] = kb(b)
	}
	return c.Dev.NewTensors(kbs, sizes)
}
func (c *CUDA) FreeTensors(t Tensors) { c.Dev.FreeTensors(t.(kernels.Tensors)) }
func (c *CUDA) SumSquaresMulti(t Tensors, acc Buf) error {
	return c.Dev.SumSquaresMulti(t.(kernels.Tensors), kb(acc))
}
func (c *CUDA) ClipByNormMulti(t Tensors, sq Buf, limit float32) error {
	return c.Dev.ClipByNormMulti(t.(kernels.Tensors), kb(sq), limit)
}
func (c *CUDA) AdamMulti(p kernels.AdamParams, lr float32, step int, param, grad, m, v Tensors) error {
	kt := func(t Tensors) kernels.Tensors { return t.(kernels.Tensors) }
	return c.Dev.AdamMulti(p, lr, step, kt(param), kt(grad), kt(m), kt(v))
}
func (c *CUDA) ClipByNorm(n int, sq Buf, limit float32, x Buf) error {
	return c.Dev.ClipByNorm(n, kb(sq), limit, kb(x))
}
