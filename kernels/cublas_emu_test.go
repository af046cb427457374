//go:build gpuemu && !gpu

package kernels

import (
	"strings"
	"testing"
)

// COMPBENCH_GEMM=cublas on the emulator must fail, not run the WMMA kernel.
func TestCublasRefusedByEmulator(t *testing.T) {
	mode, err := ParseGemmMode("cublas")
	if err != nil || mode != GemmCublas {
		t.Fatalf("ParseGemmMode(cublas) = %v, %v", mode, err)
	}
	if _, err := ParseGemmMode("cuBLAS"); err == nil {
		t.Error("mode names are lower case; cuBLAS accepted")
	}
	p := GemmParams{M: 2, N: 2, K: 2, Alpha: 1, LdA: 2, LdB: 2, LdC: 2}
	a, b, c := up(t, make([]float32, 4)), up(t, make([]float32, 4)), up(t, make([]float32, 4))
	dev.GemmKind = GemmCublas
	defer func() { dev.GemmKind = GemmAuto }()
	err = dev.Gemm(p, a, b, c)
	if err == nil || !strings.Contains(err.Error(), "cuBLAS is not available in the emulator") {
		t.Fatalf("Gemm with GemmCublas on the emulator: %v", err)
	}
	if _, err := LoadCublas(); err == nil {
		t.Error("LoadCublas succeeded on the emulator")
	}
}
