//go:build gpu || gpuemu

package engine

import "compbench/kernels"

// LogSoftmax implements DecodeBackend.
func (c *CUDA) LogSoftmax(n, v int, x, y Buf) error { return c.Dev.LogSoftmax(n, v, kb(x), kb(y)) }

// Argmax implements DecodeBackend.
func (c *CUDA) Argmax(n, v int, x Buf, init int32, skip kernels.Skip, out Buf) error {
	return c.Dev.Argmax(n, v, kb(x), init, skip, kb(out))
}

// TopK implements DecodeBackend.
func (c *CUDA) TopK(n, v, k int, x Buf, skip kernels.Skip, vals, idx Buf) error {
	return c.Dev.TopK(n, v, k, kb(x), skip, kb(vals), kb(idx))
}

// DownloadInt implements DecodeBackend.
func (c *CUDA) DownloadInt(dst []int32, src Buf) error { return c.Dev.DownloadInt32(dst, kb(src)) }
