//go:build !cgo || purego

package blas

// Name names the BLAS that Use installs.
const Name = "gonum (pure Go)"

// Use keeps Gorgonia's default pure-Go gonum BLAS.
func Use() {}

// SetThreads does nothing for the pure-Go BLAS.
func SetThreads(n int) {}

// SpinTimeout returns -1: the pure-Go BLAS has no worker threads to tune.
func SpinTimeout() int { return -1 }
