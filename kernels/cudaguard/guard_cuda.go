//go:build gpu

package cudaguard

// #cgo LDFLAGS: -ldl -Wl,--as-needed
// #include <stdlib.h>
// int cg_load(const char *lib, char *msg, int n);
// const char *cg_error_name(int r);
import "C"

import (
	"fmt"
	"os"
	"testing"
	"unsafe"
)

// Err is why the CUDA driver is unusable (libcuda.so.1 missing, or cuInit's
// error), or nil when it initialised.
var Err error

func init() {
	lib := "libcuda.so.1"
	if l := os.Getenv("COMPBENCH_LIBCUDA"); l != "" {
		lib = l // a driver outside the loader's path, or a test of a node without one
	}
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	var msg [512]C.char
	r := C.cg_load(clib, &msg[0], C.int(len(msg)))
	switch {
	case r == 0:
		return
	case r < 0:
		Err = fmt.Errorf("%s", C.GoString(&msg[0]))
	default:
		Err = fmt.Errorf("cuInit: %s", errName(r))
	}
	if testing.Testing() {
		if os.Getenv("COMPBENCH_REQUIRE_GPU") != "1" {
			fmt.Fprintf(os.Stderr, "compbench: CUDA tests skipped: no usable NVIDIA GPU/driver (%v); set COMPBENCH_REQUIRE_GPU=1 to fail instead\n", Err)
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "compbench: no usable NVIDIA GPU/driver (%v)\n", Err)
		os.Exit(1)
	}
	// A program goes on: --device cpu needs no driver, and kernels.Open
	// reports Err to a run that asks for the GPU.
}

// errName names a CUresult through the driver, or by number when the
// driver cannot.
func errName(r C.int) string {
	if s := C.cg_error_name(r); s != nil {
		return C.GoString(s)
	}
	return fmt.Sprintf("CUresult %d", int(r))
}
