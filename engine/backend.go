package engine

import "compbench/kernels"

// Buf is a backend's handle to a buffer in its memory: a slice on the CPU,
// a device pointer on the GPU.
type Buf any

// Backend runs kernels on one device. The kernel methods have the names and
// argument order of the CPU references in package kernels (XxxRef without
// Ref), with buffers in place of slices; launches may be asynchronous until
// Sync or a download.
type Backend interface {
	// Name says what runs the kernels ("cpu", "cuda:0").
	Name() string
	// Alloc, AllocInt and AllocF64 make zeroed float32, int32 and float64
	// buffers of n elements.
	Alloc(n int) (Buf, error)
	AllocInt(n int) (Buf, error)
	AllocF64(n int) (Buf, error)
	// View is elements [off, off+n) of a float32 buffer, sharing memory.
	View(b Buf, off, n int) Buf
	// Free releases a buffer made by Alloc (not a view).
	Free(b Buf)
	// Upload copies src into the first len(src) elements of dst, Download
	// the first len(dst) elements of src into dst; the buffer must be at
	// least that long.
	Upload(dst Buf, src []float32) error
	UploadInt(dst Buf, src []int32) error
	UploadF64(dst Buf, src []float64) error
	Download(dst []float32, src Buf) error
	DownloadF64(dst []float64, src Buf) error
	// Sync waits for every queued kernel.
	Sync() error

	Gemm(p kernels.GemmParams, a, b, c Buf) error
	Binary(op kernels.BinOp, n int, a Buf, aStride int, b Buf, bStride int, y Buf) error
	AddBias(n, d int, x, b, y Buf) error
	RepeatRows(n, d int, b, y Buf) error
	SumRows(n, d int, x, y Buf) error
	ReLU(n int, x, y Buf) error
	ReLUGrad(n int, y, dy, dx Buf) error
	GELU(n int, x, y Buf) error
	GELUGrad(n int, x, dy, dx Buf) error
	GELUErf(n int, x, y Buf) error
	GELUErfGrad(n int, x, dy, dx Buf) error
	Transpose2D(rows, cols int, x, y Buf) error
	Embed(n, d int, table, ids, y Buf) error
	EmbedGrad(v, d, n int, dy, ids, dtable Buf) error
	RelBias(nb, h, tq, tk int, table, buckets, y Buf) error
	RelBiasGrad(nb, h, tq, tk int, dy, buckets, dtable Buf) error
	LayerNorm(n, d int, eps float32, x, gamma, beta, y Buf) error
	LayerNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error
	LayerNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error
	LayerNormGradBeta(n, d int, dy, dbeta Buf) error
	RMSNorm(n, d int, eps float32, x, gamma, y Buf) error
	RMSNormGradX(n, d int, eps float32, x, gamma, dy, dx Buf) error
	RMSNormGradGamma(n, d int, eps float32, x, dy, dgamma Buf) error
	// AttnSoftmax takes nil for an absent mask or bias.
	AttnSoftmax(s kernels.AttnShape, x, mask Buf, mb kernels.Bcast, bias Buf, bb kernels.Bcast, y Buf) error
	AttnSoftmaxGrad(rows, tk int, p, dp, ds Buf) error
	SumTo(s kernels.AttnShape, to kernels.Bcast, x, y Buf) error
	SoftmaxCE(n, v int, p kernels.CEParams, x, t, loss Buf) error
	SoftmaxCEGrad(n, v int, p kernels.CEParams, x, t, dl, dx Buf) error
	Dropout(n int, p kernels.DropoutParams, x, y, mask Buf) error
	DropoutGrad(n int, dy, mask, dx Buf) error
	// LogProbAt writes out[r] = log softmax(x_r)[t_r] in float64 (scoring).
	LogProbAt(n, v int, x, t, out Buf) error
	Adam(n int, p kernels.AdamParams, lr float32, step int, param, grad, m, v Buf) error
	// SumSquares adds Σ x² to the float64 acc[0]; ClipByNorm scales x by
	// limit/sqrt(sq[0]) when that norm exceeds limit.
	SumSquares(n int, x, acc Buf) error
	ClipByNorm(n int, sq Buf, limit float32, x Buf) error
}
