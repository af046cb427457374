//go:build gpu

package cudaguard

import (
	"fmt"
	"os"
	"testing"

	"compbench/kernels/cudrv"
)

// init skips a GPU test binary on a machine without a usable GPU; it does
// nothing in any other binary, which opens the driver only when a command
// asks for --device cuda.
func init() {
	if !testing.Testing() {
		return
	}
	err := cudrv.Init()
	if err == nil {
		return
	}
	if os.Getenv("COMPBENCH_REQUIRE_GPU") == "1" {
		fmt.Fprintf(os.Stderr, "compbench: no usable NVIDIA GPU/driver (%v), and COMPBENCH_REQUIRE_GPU=1\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "compbench: CUDA tests skipped: no usable NVIDIA GPU/driver (%v); set COMPBENCH_REQUIRE_GPU=1 to fail instead\n", err)
	os.Exit(0)
}
