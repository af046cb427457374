//go:build gpuemu && !gpu

package engine_test

import (
	"strings"
	"testing"

	"compbench/engine"
)

// COMPBENCH_GEMM is checked when the device opens: a bad name, or cuBLAS where
// it cannot be loaded (the emulator never has it), fails there with one
// line, never at the first product and never by falling back.
func TestGemmEnvCheckedAtOpen(t *testing.T) {
	for _, c := range []struct{ env, want string }{
		{"cublas", "COMPBENCH_GEMM=cublas: cuBLAS is not available in the emulator"},
		{"bf16", "COMPBENCH_GEMM: gemm mode \"bf16\""},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("COMPBENCH_GEMM", c.env)
			_, err := engine.Open(engine.Device{CUDA: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
