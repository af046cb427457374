//go:build !cgo || purego

package models

// Without cgo the LSTM passes use the Go loops of lstm_math.go.

func sigmoidVec(x []float32) { sigmoidSlice(x) }

func tanhVec(x []float32) { tanhSlice(x) }

// lstmAct applies the gate nonlinearities to z [N, 4H] in place.
func lstmAct(z []float32, H int) {
	for r := 0; r+4*H <= len(z); r += 4 * H {
		sigmoidSlice(z[r : r+2*H])
		tanhSlice(z[r+2*H : r+3*H])
		sigmoidSlice(z[r+3*H : r+4*H])
	}
}
