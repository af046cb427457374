// Package vecmath holds the float32 elementary functions of compbench's CPU
// paths: the LSTM gates' sigmoid and tanh, GPT-2's GELU (Radford et al.
// 2019, the tanh approximation of Hendrycks & Gimpel 2016) and the
// log-sum-exp of GPT-2 scoring (Godbole & Jia §3: a log-likelihood per
// token over the 50,257-id vocabulary).
//
// Evaluated in float64 with math.Exp and math.Tanh, these cost more than
// the matrix products around them (about 17 ns a value against a fraction
// of a nanosecond vectorised). The functions here agree with the float64
// ones to a few float32 ulp (TestAccuracy); with cgo they are C loops that
// the compiler vectorises (AVX2 and FMA where the CPU has them, chosen at
// run time), without cgo the Go loops of this file. The two may differ in
// the last bit, as may CPUs with and without FMA.
package vecmath

import "math"

// The Go loops have no branches on the sign or size of the argument: gate
// pre-activations scatter around 0, and a branch mispredicted half the
// time costs more than the arithmetic.
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

	geluC = 0.7978845608028654 // sqrt(2/pi)
	geluA = 0.044715
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

// expClamped returns e^y for |y| <= expLim.
func expClamped(y float32) float32 {
	n := int32(y*exp32N+4096.5) - 4096 // round to nearest; |y·32/ln2| < 4096
	fn := float32(n)
	r := y - fn*ln2_32H - fn*ln2_32L
	p := 1 + r*(1+r*(0.5+r*(1.0/6+r*(1.0/24))))
	return exp2Frac[n&31] * p * math.Float32frombits(uint32((n>>5)+127)<<23)
}

// clampExp clamps y to ±expLim with ifs: they predict well, and min/max
// cost more.
func clampExp(y float32) float32 {
	if y > expLim {
		y = expLim
	}
	if y < -expLim {
		y = -expLim
	}
	return y
}

// sigmoidGo sets x[i] = 1/(1+e^(−x[i])); beyond ±87 the result is within
// 1e-38 of 0 or 1.
func sigmoidGo(x []float32) {
	for i, v := range x {
		x[i] = 1 / (1 + expClamped(clampExp(-v)))
	}
}

// tanhGo sets x[i] = tanh(x[i]) as sign(x)·u/(u+2) with u = e^(2|x|) − 1,
// u computed without cancellation near 0.
func tanhGo(x []float32) {
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

// GELU is written as x·σ(2u), u = sqrt(2/π)(x + 0.044715x³), which equals
// 0.5x(1 + tanh u) but has no cancellation where tanh u is near −1: the
// float64 form's 1 + tanh u loses every digit there in float32. With
// e = e^(−2u) and s = σ(2u) = 1/(1+e), 1 − s = e·s, so the derivative
// s + x·s(1−s)·2u' needs the one exponential too. Beyond |2u| > 87 the
// clamped e is replaced by the limit (s = 0 or 1, s(1−s) = 0), so huge
// |x| gives x·s and not x³ times a clamped exponential.

// geluGo sets y[i] = GELU(x[i]).
func geluGo(x, y []float32) {
	for i, v := range x[:len(y)] {
		z := -2 * geluC * (v + geluA*v*v*v)
		s := 1 / (1 + expClamped(clampExp(z)))
		if z > expLim {
			s = 0
		}
		y[i] = v * s
	}
}

// geluGradGo sets dx[i] = dy[i]·GELU'(x[i]).
func geluGradGo(x, dy, dx []float32) {
	for i, v := range x[:len(dx)] {
		v2 := v * v
		z := -2 * geluC * (v + geluA*v2*v)
		e := expClamped(clampExp(z))
		s := 1 / (1 + e)
		ss := e * s * s // s(1−s)
		if z > expLim {
			s, ss = 0, 0
		}
		if z < -expLim {
			s, ss = 1, 0
		}
		dx[i] = dy[i] * (s + v*ss*(2*geluC)*(1+3*geluA*v2))
	}
}

// expSumGo returns max(x) and Σ exp(x_i − max), the sum in float64.
func expSumGo(x []float32) (float32, float64) {
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var sum float64
	for _, v := range x {
		sum += float64(expClamped(max(v-mx, -expLim)))
	}
	return mx, sum
}

// expShiftGo sets y[i] = e^(x[i] − c), arguments below −expLim clamped.
func expShiftGo(x []float32, c float32, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = expClamped(max(v-c, -expLim))
	}
}

// dotAxpyGo returns x·y and adds a·x into z.
func dotAxpyGo(x, y []float32, a float32, z []float32) float32 {
	y, z = y[:len(x)], z[:len(x)]
	var d float32
	for i, v := range x {
		d += v * y[i]
		z[i] += a * v
	}
	return d
}

// scoreBackGo adds de·u into dv and de·v·(1−u²) into dz1 and dz2.
func scoreBackGo(de float32, u, v, dv, dz1, dz2 []float32) {
	v, dv, dz1, dz2 = v[:len(u)], dv[:len(u)], dz1[:len(u)], dz2[:len(u)]
	for i, w := range u {
		dv[i] += de * w
		d := de * v[i] * (1 - w*w)
		dz1[i] += d
		dz2[i] += d
	}
}

// Sigmoid returns 1/(1+e^(−x)).
func Sigmoid(x float32) float32 {
	v := [1]float32{x}
	sigmoidGo(v[:])
	return v[0]
}

// Tanh returns tanh(x).
func Tanh(x float32) float32 {
	v := [1]float32{x}
	tanhGo(v[:])
	return v[0]
}
