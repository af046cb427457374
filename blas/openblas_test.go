//go:build cgo && !purego

package blas

import (
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// After Use, OpenBLAS's workers run with compbench's spin timeout, or the
// user's OPENBLAS_THREAD_TIMEOUT, and a product split across its restarted
// threads is still right.
func TestSpinTimeout(t *testing.T) {
	want := spinTimeout
	if v := os.Getenv("OPENBLAS_THREAD_TIMEOUT"); v != "" {
		want, _ = strconv.Atoi(v)
	}
	got := SpinTimeout()
	if got == -1 {
		t.Skip("this OpenBLAS does not report its thread timeout")
	}
	if got != want {
		t.Fatalf("spin timeout %d, want %d", got, want)
	}
	SetThreads(2)
	defer SetThreads(1)
	const n = 256 // large enough for OpenBLAS to use both threads
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%13) - 6
		if i/n == i%n {
			b[i] = 1
		}
	}
	G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, b, n, 0, c, n)
	for i := range a {
		if c[i] != a[i] {
			t.Fatalf("A·I differs from A at %d: %g, want %g", i, c[i], a[i])
		}
	}
}
