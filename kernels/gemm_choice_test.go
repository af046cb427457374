package kernels

import (
	"errors"
	"strings"
	"testing"
)

// TestChooseGemm: auto takes cuBLAS where it loads and compbench's kernel
// (TF32, or FP32 before sm_80) where it does not, saying why; explicit
// modes are kept or refused, never replaced.
func TestChooseGemm(t *testing.T) {
	loads := func() (string, error) { return "libcublas.so.12 12.4.5", nil }
	fails := func() (string, error) { return "", errors.New("libcublas.so.13: cannot open shared object file") }
	for _, c := range []struct {
		name        string
		req         GemmMode
		tensorCores bool
		load        func() (string, error)
		mode        GemmMode
		want        string // the choice's String, or the error
		err         bool
	}{
		{"auto, cuBLAS loads", GemmAuto, true, loads, GemmCublas, "cuBLAS libcublas.so.12 12.4.5 (auto)", false},
		{"auto, cuBLAS loads, before sm_80", GemmAuto, false, loads, GemmCublas, "cuBLAS libcublas.so.12 12.4.5 (auto)", false},
		{"auto, no cuBLAS", GemmAuto, true, fails, GemmTF32, "compbench TF32 kernel (auto: no cuBLAS could be loaded)", false},
		{"auto, no cuBLAS, before sm_80", GemmAuto, false, fails, GemmFP32, "compbench FP32 kernel (auto: no cuBLAS could be loaded)", false},
		{"cublas", GemmCublas, true, loads, GemmCublas, "cuBLAS libcublas.so.12 12.4.5 (COMPBENCH_GEMM=cublas)", false},
		{"cublas, none loads", GemmCublas, true, fails, 0, "cannot open shared object file", true},
		{"tf32", GemmTF32, true, loads, GemmTF32, "compbench TF32 kernel (COMPBENCH_GEMM=tf32)", false},
		{"tf32 before sm_80", GemmTF32, false, loads, 0, "needs tensor cores", true},
		{"fp32", GemmFP32, true, loads, GemmFP32, "compbench FP32 kernel (COMPBENCH_GEMM=fp32)", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ChooseGemm(c.req, c.tensorCores, c.load)
			if c.err {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want one containing %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != c.mode || got.Requested != c.req || got.String() != c.want {
				t.Errorf("got %v (%q), want %v (%q)", got.Mode, got, c.mode, c.want)
			}
			if (got.NoCublas != "") != (c.req == GemmAuto && c.mode != GemmCublas) {
				t.Errorf("NoCublas %q", got.NoCublas)
			}
		})
	}
}

func TestParseGemmMode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want GemmMode
		err  bool
	}{
		{"", GemmAuto, false}, {"auto", GemmAuto, false}, {"tf32", GemmTF32, false},
		{"fp32", GemmFP32, false}, {"cublas", GemmCublas, false},
		{"cuBLAS", 0, true}, {"bf16", 0, true},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseGemmMode(c.in)
			if (err != nil) != c.err || (!c.err && got != c.want) {
				t.Fatalf("ParseGemmMode(%q) = %v, %v", c.in, got, err)
			}
			if !c.err && c.in != "" && got.String() != c.in {
				t.Errorf("String() = %q, want %q", got, c.in)
			}
		})
	}
}
