package blas

import (
	"testing"

	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
)

// After Use, Gorgonia's BLAS multiplies correctly (the link works).
func TestUse(t *testing.T) {
	Use()
	SetThreads(1)
	a := []float32{1, 2, 3, 4, 5, 6} // [2, 3]
	b := []float32{1, 0, 0, 1, 1, 1} // [3, 2]
	c := make([]float32, 4)          // [2, 2]
	G.WhichBLAS().Sgemm(blas.NoTrans, blas.NoTrans, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2)
	want := []float32{4, 5, 10, 11}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("%s: got %v, want %v", Name, c, want)
		}
	}
}
