//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Name names the BLAS that Use installs.
const Name = "openblas"

// Use makes OpenBLAS Gorgonia's and gorgonia/tensor's BLAS. Call it once
// before building graphs; calling it again is harmless.
func Use() { G.Use(netlib.Implementation{}) }

// SetThreads sets how many threads OpenBLAS uses for one product (its
// default is one per core, or OPENBLAS_NUM_THREADS). On a machine shared with
// other work, 1 avoids OpenBLAS threads spinning against each other.
func SetThreads(n int) {
	if n > 0 {
		C.openblas_set_num_threads(C.int(n))
	}
}
