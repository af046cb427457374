//go:build !cgo || purego

package vecmath

// Without cgo the exported functions are the Go loops of go.go.

// SigmoidSlice sets x[i] = 1/(1+e^(−x[i])).
func SigmoidSlice(x []float32) { sigmoidGo(x) }

// TanhSlice sets x[i] = tanh(x[i]).
func TanhSlice(x []float32) { tanhGo(x) }

// LSTMGates applies the gate nonlinearities σ, σ, tanh, σ to the i, f, g,
// o blocks of each row of z [N, 4H] in place.
func LSTMGates(z []float32, H int) {
	for r := 0; r+4*H <= len(z); r += 4 * H {
		sigmoidGo(z[r : r+2*H])
		tanhGo(z[r+2*H : r+3*H])
		sigmoidGo(z[r+3*H : r+4*H])
	}
}

// GELU sets y[i] = GELU(x[i]) for i < len(y); x may alias y.
func GELU(x, y []float32) { geluGo(x, y) }

// GELUGrad sets dx[i] = dy[i]·GELU'(x[i]) for i < len(dx).
func GELUGrad(x, dy, dx []float32) { geluGradGo(x, dy, dx) }

// ExpSum returns the largest value of a non-empty x and Σ e^(x_i − max),
// summed in float64: log softmax(x)_i = x_i − max − log sum.
func ExpSum(x []float32) (mx float32, sum float64) { return expSumGo(x) }

// ExpShift sets y[i] = e^(x[i] − c) for i < len(x) (y at least as long),
// arguments below −87 taken as −87.
func ExpShift(x []float32, c float32, y []float32) { expShiftGo(x, c, y) }

// DotAxpy returns x·y and adds a·x into z (y and z at least as long as x).
func DotAxpy(x, y []float32, a float32, z []float32) float32 { return dotAxpyGo(x, y, a, z) }

// ScoreBack is the backward pass of a score de-weighted v·tanh(·) given
// u = tanh(·): it adds de·u into dv and de·v·(1−u²) into dz1 and dz2.
func ScoreBack(de float32, u, v, dv, dz1, dz2 []float32) { scoreBackGo(de, u, v, dv, dz1, dz2) }
