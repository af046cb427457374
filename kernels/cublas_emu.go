//go:build gpuemu && !gpu

package kernels

import "errors"

// errCublasEmu is the emulator's answer to GemmCublas: cuBLAS's kernels are
// closed source, so there is nothing to emulate, and COMPBENCH_GEMM=cublas
// must fail rather than quietly run compbench's own kernels.
var errCublasEmu = errors.New("cuBLAS is not available in the emulator (build tag gpuemu); use COMPBENCH_GEMM=auto, tf32 or fp32, or the gpu build on a GPU")

// LoadCublas reports that the emulator has no cuBLAS.
func LoadCublas() (string, error) { return "", errCublasEmu }

func (d *Device) gemmCublas(GemmParams, Buf, Buf, Buf) error { return errCublasEmu }
