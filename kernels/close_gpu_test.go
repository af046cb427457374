//go:build gpu || gpuemu

package kernels

import (
	"math"
	"testing"
)

// closeTo fails unless |got-want| <= atol + rtol*|want| everywhere.
func closeTo(t *testing.T, what string, got, want []float32, atol, rtol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= atol+rtol*math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d] = %g, want %g (atol %g, rtol %g)", what, i, got[i], want[i], atol, rtol)
		}
	}
}
