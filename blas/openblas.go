//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas
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
