//go:build gpu || gpuemu

package reftest

import (
	"testing"

	"compbench/engine"
)

// CUDA opens the GPU backend (with build tag gpuemu, the kernel emulator)
// for one test, with FP32 products: they differ from the CPU's in
// summation order only, so Bound holds as it is. TF32 products round their
// operands to 10 bits, which Bound does not count, and are not used. The
// test fails if it leaves device memory allocated.
func CUDA(t *testing.T) engine.Backend {
	t.Helper()
	t.Setenv("COMPBENCH_GEMM", "fp32")
	b, err := engine.Open(engine.Device{CUDA: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := b.(*engine.CUDA)
		if err := c.Close(); err != nil {
			t.Errorf("closing %s: %v", c.Name(), err)
		}
		if n, bytes := c.Dev.Live(); n != 0 {
			t.Errorf("%d device buffers (%d bytes) still allocated after the test", n, bytes)
		}
	})
	return b
}
