package engine

import (
	"fmt"

	"compbench/kernels"
)

// LogSoftmax implements DecodeBackend.
func (c *CPU) LogSoftmax(n, v int, x, y Buf) error {
	kernels.LogSoftmaxRef(n, v, f32(x), f32(y))
	return nil
}

// Argmax implements DecodeBackend.
func (c *CPU) Argmax(n, v int, x Buf, init int32, skip kernels.Skip, out Buf) error {
	if init < 0 || int(init) >= v {
		return fmt.Errorf("argmax: init %d outside [0,%d)", init, v)
	}
	kernels.ArgmaxRef(n, v, f32(x), init, skip, i32(out))
	return nil
}

// TopK implements DecodeBackend.
func (c *CPU) TopK(n, v, k int, x Buf, skip kernels.Skip, vals, idx Buf) error {
	kernels.TopKRef(n, v, k, f32(x), skip, f32(vals), i32(idx))
	return nil
}

// DownloadInt implements DecodeBackend.
func (c *CPU) DownloadInt(dst []int32, src Buf) error {
	if s := i32(src); len(s) < len(dst) {
		return fmt.Errorf("download: buffer of %d ids into %d", len(s), len(dst))
	}
	copy(dst, i32(src))
	return nil
}
