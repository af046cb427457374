package models

import "math"

// Float32 nonlinearities for the hand-written LSTM passes. A training step
// evaluates about 10^7 of them, and float64 math.Exp and math.Tanh cost
// more than the GEMMs around them; these agree with the float64 functions
// to a few float32 ulp (TestFastMath), and the LSTM's gradients are the
// analytic ones of the same functions. The loops have no branches on the
// sign or size of the argument: gate pre-activations scatter around 0, and
// a branch mispredicted half the time costs more than the arithmetic.
//
// e^y is computed as 2^m · 2^(j/32) · e^r with y = (32m + j)·ln2/32 + r,
// |r| <= ln2/64, where a short Taylor polynomial of e^r is exact to
// float32.

const (
	exp32N  = 46.16624130844683     // 32/ln 2
	ln2_32H = 0.0216522216796875    // ln2/32 rounded to 11 bits, so n·ln2_32H is exact
	ln2_32L = 8.627712810790195e-06 // ln2/32 − ln2_32H
	expLim  = 87                    // |y| bound keeping 2^m a normal float32
	tanhLim = 9                     // tanh(9) rounds to 1 in float32
)

// exp2Frac[j] is 2^(j/32) and exp2FracM1[j] is 2^(j/32) − 1, each rounded
// once from float64 (the second keeps e^y − 1 accurate near 0).
var exp2Frac, exp2FracM1 = func() (t, m1 [32]float32) {
	for j := range t {
		t[j] = float32(math.Exp2(float64(j) / 32))
		m1[j] = float32(math.Exp2(float64(j)/32) - 1)
	}
	return t, m1
}()

// sigmoidSlice sets x[i] = 1/(1+e^(−x[i])); beyond ±87 the result is
// within 1e-38 of 0 or 1.
func sigmoidSlice(x []float32) {
	for i, v := range x {
		y := -v // clamped with ifs: they predict well, and min/max cost more
		if y > expLim {
			y = expLim
		}
		if y < -expLim {
			y = -expLim
		}
		n := int32(y*exp32N+4096.5) - 4096 // round to nearest; |y·32/ln2| < 4096
		fn := float32(n)
		r := y - fn*ln2_32H - fn*ln2_32L
		p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24))))
		e := exp2Frac[n&31] * p * math.Float32frombits(uint32((n>>5)+127)<<23)
		x[i] = 1 / (1 + e)
	}
}

// tanhSlice sets x[i] = tanh(x[i]) as sign(x)·u/(u+2) with u = e^(2|x|) − 1,
// u computed without cancellation near 0.
func tanhSlice(x []float32) {
	for i, v := range x {
		bits := math.Float32bits(v)
		sign := bits & (1 << 31)
		a := math.Float32frombits(bits &^ sign)
		if a > tanhLim {
			a = tanhLim
		}
		y := 2 * a
		n := int32(y*exp32N + 0.5) // y >= 0: truncation rounds to nearest
		fn := float32(n)
		r := y - fn*ln2_32H - fn*ln2_32L
		q := r * (1 + r*(0.5+r*(1.0/6+r*(1.0/24)))) // e^r − 1
		j := n & 31
		s := math.Float32frombits(uint32((n>>5)+127) << 23) // 2^m, m in 0..8
		u := s*(exp2FracM1[j]+exp2Frac[j]*q) + (s - 1)
		x[i] = math.Float32frombits(math.Float32bits(u/(u+2)) | sign)
	}
}

// sigmoid is sigmoidSlice on one value.
func sigmoid(x float32) float32 {
	v := [1]float32{x}
	sigmoidSlice(v[:])
	return v[0]
}

// tanh32 is tanhSlice on one value.
func tanh32(x float32) float32 {
	v := [1]float32{x}
	tanhSlice(v[:])
	return v[0]
}
