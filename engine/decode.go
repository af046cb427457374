package engine

import (
	"fmt"

	"compbench/kernels"
)

// Decoding kernels: what incremental decoding (models/transformer/decode_pick.go)
// needs beyond Backend. The backends implement them in decode_cpu.go and
// decode_cuda.go; they are a separate interface so that Backend, which the
// training executor is written against, stays as it is.

// DecodeBackend is a Backend that can also pick tokens on the device, so
// that a decoding step downloads only the chosen ids (greedy) or the k best
// candidates per row (beam), never the logits.
type DecodeBackend interface {
	Backend
	// LogSoftmax is kernels.LogSoftmaxRef: y [N,V] = log softmax of x rows.
	LogSoftmax(n, v int, x, y Buf) error
	// Argmax is kernels.ArgmaxRef into the int32 buffer out [N].
	Argmax(n, v int, x Buf, init int32, skip kernels.Skip, out Buf) error
	// TopK is kernels.TopKRef into vals [N,k] and the int32 idx [N,k].
	TopK(n, v, k int, x Buf, skip kernels.Skip, vals, idx Buf) error
	// DownloadInt copies the first len(dst) elements of an int32 buffer.
	DownloadInt(dst []int32, src Buf) error
}

// Decoding returns b's decoding kernels, or an error naming the backend
// when it has none.
func Decoding(b Backend) (DecodeBackend, error) {
	d, ok := b.(DecodeBackend)
	if !ok {
		return nil, fmt.Errorf("engine: backend %s has no decoding kernels", b.Name())
	}
	return d, nil
}
