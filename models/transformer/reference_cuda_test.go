//go:build gpu || gpuemu

package transformer

import (
	"testing"

	"compbench/internal/reftest"
)

// TestTransformerReferenceCUDA runs reference_test.go's cases on the GPU backend
// (the kernel emulator with build tag gpuemu) under the same bound.
func TestTransformerReferenceCUDA(t *testing.T) { referenceCases(t, reftest.CUDA(t)) }
