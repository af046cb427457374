//go:build gpuemu && !gpu

package engine_test

import (
	"strings"
	"testing"

	"compbench/engine"
	"compbench/kernels"
)

// COMPBENCH_GEMM is resolved when the device opens. auto (or unset) falls
// to compbench's TF32 kernel where cuBLAS cannot be loaded (the emulator
// never has it) and the backend's name says so; an explicit mode is kept;
// a bad name, or cuBLAS where it cannot be loaded, fails there with one
// line, never at the first product and never by falling back.
func TestGemmEnvCheckedAtOpen(t *testing.T) {
	for _, c := range []struct {
		name, env string
		mode      kernels.GemmMode // chosen; GemmAuto: the open must fail
		want      string           // in the name, or in the error
	}{
		{"unset", "", kernels.GemmTF32, "GEMM compbench TF32 kernel (auto: no cuBLAS could be loaded)"},
		{"auto", "auto", kernels.GemmTF32, "GEMM compbench TF32 kernel (auto: no cuBLAS could be loaded)"},
		{"tf32", "tf32", kernels.GemmTF32, "GEMM compbench TF32 kernel (COMPBENCH_GEMM=tf32)"},
		{"fp32", "fp32", kernels.GemmFP32, "GEMM compbench FP32 kernel (COMPBENCH_GEMM=fp32)"},
		{"cublas", "cublas", kernels.GemmAuto, "COMPBENCH_GEMM=cublas: cuBLAS is not available in the emulator"},
		{"bad name", "bf16", kernels.GemmAuto, "COMPBENCH_GEMM: gemm mode \"bf16\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("COMPBENCH_GEMM", c.env)
			be, err := engine.Open(engine.Device{CUDA: true})
			if c.mode == kernels.GemmAuto {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want one containing %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cu := be.(*engine.CUDA)
			defer cu.Close()
			if got := cu.GemmChoice().Mode; got != c.mode || cu.Dev.GemmKind != c.mode {
				t.Errorf("chose %v (device runs %v), want %v", got, cu.Dev.GemmKind, c.mode)
			}
			if d := engine.Describe(be); !strings.HasPrefix(d, be.Name()+", ") || !strings.HasSuffix(d, c.want) {
				t.Errorf("described as %q, want %q then %q", d, be.Name(), c.want)
			}
			if got := engine.GemmName(be); got != c.mode.String() {
				t.Errorf("GemmName %q, want %q", got, c.mode)
			}
			if c.mode == kernels.GemmTF32 && c.env != "tf32" && !strings.Contains(cu.GemmChoice().NoCublas, "not available in the emulator") {
				t.Errorf("auto's reason for not using cuBLAS: %q", cu.GemmChoice().NoCublas)
			}
		})
	}
	if got, d := engine.GemmName(&engine.CPU{}), engine.Describe(&engine.CPU{}); got != "" || d != "cpu" {
		t.Errorf("the CPU backend: GemmName %q, Describe %q; want \"\" and \"cpu\"", got, d)
	}
	free, total, err := engine.DeviceMemory(engine.Device{CUDA: true})
	if err != nil || free <= 0 || free > total {
		t.Errorf("DeviceMemory: free %d, total %d, %v", free, total, err)
	}
	if _, _, err := engine.DeviceMemory(engine.Device{CUDA: true, Ordinal: 1}); err == nil {
		t.Error("DeviceMemory of cuda:1 on the emulator succeeded")
	}
}
