package kernels

import (
	"errors"
	"fmt"
)

// GemmMode selects the matrix-product kernel.
type GemmMode int

const (
	// GemmAuto, as a requested mode (COMPBENCH_GEMM=auto or unset), is
	// resolved by ChooseGemm: cuBLAS where it loads, else compbench's own
	// kernel. As a Device's GemmKind it runs compbench's own kernel: TF32
	// on sm_80 and later, FP32 before.
	GemmAuto GemmMode = iota
	// GemmTF32 forces the WMMA TF32 kernel (sm_80 and later only).
	GemmTF32
	// GemmFP32 forces the FP32 SIMT kernel.
	GemmFP32
	// GemmCublas runs products with cuBLAS, loaded at run time (TF32 tensor
	// cores on sm_80 and later, else FP32); an error when it cannot load.
	GemmCublas
)

var gemmNames = [...]string{GemmAuto: "auto", GemmTF32: "tf32", GemmFP32: "fp32", GemmCublas: "cublas"}

// String is the mode's COMPBENCH_GEMM name.
func (m GemmMode) String() string {
	if m < 0 || int(m) >= len(gemmNames) {
		return fmt.Sprintf("GemmMode(%d)", int(m))
	}
	return gemmNames[m]
}

// ParseGemmMode reads a GEMM mode name: "auto", "tf32", "fp32" or "cublas" (the
// COMPBENCH_GEMM environment variable, for benchmarks and for telling TF32
// rounding from bugs); "" is auto.
func ParseGemmMode(s string) (GemmMode, error) {
	if s == "" {
		return GemmAuto, nil
	}
	for m, n := range gemmNames {
		if s == n {
			return GemmMode(m), nil
		}
	}
	return GemmAuto, fmt.Errorf("gemm mode %q: want auto, tf32, fp32 or cublas", s)
}

// GemmChoice is the product kernel a GPU backend runs, and why.
type GemmChoice struct {
	// Requested is the mode asked for (GemmAuto when COMPBENCH_GEMM is unset).
	Requested GemmMode
	// Mode is the kernel that runs: GemmCublas, GemmTF32 or GemmFP32.
	Mode GemmMode
	// Library is the loaded cuBLAS's soname and version when Mode is
	// GemmCublas ("libcublas.so.12 12.4.5").
	Library string
	// NoCublas is, when auto fell to compbench's kernel, why cuBLAS did
	// not load (every file tried and the loader's reason).
	NoCublas string
}

// String says which kernel runs and why, in one line.
func (c GemmChoice) String() string {
	why := "COMPBENCH_GEMM=" + c.Requested.String()
	if c.Requested == GemmAuto {
		why = "auto"
		if c.Mode != GemmCublas {
			why = "auto: no cuBLAS could be loaded"
		}
	}
	if c.Mode == GemmCublas {
		return fmt.Sprintf("cuBLAS %s (%s)", c.Library, why)
	}
	return fmt.Sprintf("compbench %s kernel (%s)", map[GemmMode]string{GemmTF32: "TF32", GemmFP32: "FP32"}[c.Mode], why)
}

// ChooseGemm resolves a requested mode for a device with or without TF32
// tensor cores (sm_80 and later); load is LoadCublas. auto takes the
// fastest correct kernel: cuBLAS where it loads (3.4 times compbench's
// WMMA kernel on a paper-size training step, docs/cuda.md), otherwise
// compbench's TF32 kernel, or its FP32 kernel before sm_80. An explicit
// mode is kept, and one that cannot run fails here, when the device is
// opened, rather than at the first product or by running another kernel.
func ChooseGemm(req GemmMode, tensorCores bool, load func() (string, error)) (GemmChoice, error) {
	c := GemmChoice{Requested: req, Mode: req}
	switch req {
	case GemmCublas:
		lib, err := load()
		if err != nil {
			return GemmChoice{}, err
		}
		c.Library = lib
	case GemmTF32:
		if !tensorCores {
			return GemmChoice{}, errors.New("the TF32 kernel needs tensor cores (sm_80 or later); use fp32, cublas or auto")
		}
	case GemmFP32:
	case GemmAuto:
		lib, err := load()
		if err == nil {
			c.Mode, c.Library = GemmCublas, lib
			break
		}
		c.Mode, c.NoCublas = GemmFP32, err.Error()
		if tensorCores {
			c.Mode = GemmTF32
		}
	default:
		return GemmChoice{}, fmt.Errorf("unknown gemm mode %d", int(req))
	}
	return c, nil
}
