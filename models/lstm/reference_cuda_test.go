//go:build gpu || gpuemu

package lstm

import (
	"testing"

	"compbench/internal/reftest"
)

// TestLSTMReferenceCUDA runs reference_test.go's cases on the GPU backend
// (the kernel emulator with build tag gpuemu) under the same bound.
func TestLSTMReferenceCUDA(t *testing.T) { referenceCases(t, reftest.CUDA(t)) }
