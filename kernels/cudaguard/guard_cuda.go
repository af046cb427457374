//go:build gpu

package cudaguard

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
// static const char* errName(CUresult r) {
//   const char* s = 0;
//   if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == 0) return "unknown error";
//   return s;
// }
import "C"

import (
	"fmt"
	"os"
	"testing"
)

// Err is the cuInit failure, or nil when the driver initialised.
var Err error

func init() {
	r := C.cuInit(0)
	if r == C.CUDA_SUCCESS {
		return
	}
	Err = fmt.Errorf("cuInit: %s", C.GoString(C.errName(r)))
	if testing.Testing() && os.Getenv("COMPBENCH_REQUIRE_GPU") != "1" {
		fmt.Fprintf(os.Stderr, "compbench: CUDA tests skipped: no usable NVIDIA GPU/driver (%v); set COMPBENCH_REQUIRE_GPU=1 to fail instead\n", Err)
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "compbench: this is the CUDA build and no usable NVIDIA GPU/driver was found (%v); use the CPU build\n", Err)
	os.Exit(1)
}
