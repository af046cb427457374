package safetensors

import "math"

// NonFinite names the first non-finite value in v ("NaN", "+Inf" or
// "-Inf"), or returns "" when every value is finite. Loaders use it so a
// diverged or corrupt checkpoint is refused when read, naming the tensor,
// rather than yielding NaN scores later.
func NonFinite(v []float32) string {
	for _, x := range v {
		f := float64(x)
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "+Inf"
		case math.IsInf(f, -1):
			return "-Inf"
		}
	}
	return ""
}
