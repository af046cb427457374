package models

import "math"

// Float32 nonlinearities for the hand-written LSTM passes. The passes
// evaluate about 10^7 of them per training step, and float64 math.Exp and
// math.Tanh cost more than the GEMMs around them. These agree with the
// float64 functions rounded to float32 within a few ulp
// (TestFastMath); the LSTM's gradients are the analytic ones of these
// same functions.

const (
	exp32N  = 46.16624130844683     // 32/ln 2
	ln2_32H = 0.0216522216796875    // ln2/32 rounded to 11 bits, so n·ln2_32H is exact
	ln2_32L = 8.627712810790195e-06 // ln2/32 − ln2_32H
	expMax  = 88.3762626647949
	expMin  = -87.3365447505531
)

// exp2Frac[j] is 2^(j/32).
var exp2Frac = func() (t [32]float32) {
	for j := range t {
		t[j] = float32(math.Exp2(float64(j) / 32))
	}
	return t
}()

// exp32 is e^x in float32: x = (32m + j)·ln2/32 + r with |r| <= ln2/64,
// so e^x = 2^m · 2^(j/32) · e^r, with e^r by its cubic Taylor polynomial
// (error below 6e-10 on that range) and 2^m put into the exponent bits.
func exp32(x float32) float32 {
	switch {
	case x > expMax:
		return float32(math.Inf(1))
	case x < expMin:
		return 0
	}
	v := x * exp32N
	if v < 0 {
		v -= 0.5
	} else {
		v += 0.5
	}
	n := int32(v) // round to nearest
	fn := float32(n)
	r := x - fn*ln2_32H - fn*ln2_32L
	p := 1 + r*(1+r*(0.5+r*(1.0/6)))
	return exp2Frac[n&31] * p * math.Float32frombits(uint32((n>>5)+127)<<23)
}

func sigmoid(x float32) float32 { return 1 / (1 + exp32(-x)) }

// tanh32 is tanh in float32 (tanhSlice on one value).
func tanh32(x float32) float32 {
	v := [1]float32{x}
	tanhSlice(v[:])
	return v[0]
}

// sigmoidSlice sets x[i] = σ(x[i]); exp32 is written out so that the loop
// runs without calls.
func sigmoidSlice(x []float32) {
	for i, v := range x {
		v = -v
		var e float32
		switch {
		case v > expMax:
			x[i] = 0
			continue
		case v < expMin:
			x[i] = 1
			continue
		default:
			f := v * exp32N
			if f < 0 {
				f -= 0.5
			} else {
				f += 0.5
			}
			n := int32(f)
			fn := float32(n)
			r := v - fn*ln2_32H - fn*ln2_32L
			p := 1 + r*(1+r*(0.5+r*(1.0/6)))
			e = exp2Frac[n&31] * p * math.Float32frombits(uint32((n>>5)+127)<<23)
		}
		x[i] = 1 / (1 + e)
	}
}

// tanhSlice sets x[i] = tanh(x[i]): its odd Taylor series below 0.25,
// where 1 − 2/(e^{2|x|}+1) would lose relative precision, ±1 beyond 9,
// and that formula with exp32 written out in between.
func tanhSlice(x []float32) {
	for i, v := range x {
		a := v
		if a < 0 {
			a = -a
		}
		switch {
		case a < 0.25:
			x2 := v * v
			x[i] = v * (1 + x2*(-1.0/3+x2*(2.0/15+x2*(-17.0/315+x2*(62.0/2835+x2*(-1382.0/155925))))))
			continue
		case a > 9:
			x[i] = v / a
			continue
		}
		// e^(2a) with 2a in [0.5, 18]: no overflow or underflow.
		y := 2 * a
		n := int32(y*exp32N + 0.5)
		fn := float32(n)
		r := y - fn*ln2_32H - fn*ln2_32L
		p := 1 + r*(1+r*(0.5+r*(1.0/6)))
		e := exp2Frac[n&31] * p * math.Float32frombits(uint32((n>>5)+127)<<23)
		t := 1 - 2/(e+1)
		if v < 0 {
			t = -t
		}
		x[i] = t
	}
}
