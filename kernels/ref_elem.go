package kernels

import (
	"fmt"
	"math"

	"compbench/vecmath"
)

// BinOp is an elementwise binary operation of BinaryRef.
type BinOp int32

const (
	// OpAdd: a + b (Gorgonia's + and ops.Add).
	OpAdd BinOp = iota
	// OpSub: a - b.
	OpSub
	// OpMul: a * b (Gorgonia's ⊙).
	OpMul
	// OpDiv: a / b.
	OpDiv
	// OpGreaterEq: 1 when a >= b, else 0 (Gorgonia's >= with retSame,
	// which G.Rectify builds as x ⊙ (x >= 0)).
	OpGreaterEq
)

// Valid reports whether op is one of the defined operations.
func (op BinOp) Valid() bool { return op >= OpAdd && op <= OpGreaterEq }

func (op BinOp) String() string {
	if !op.Valid() {
		return fmt.Sprintf("BinOp(%d)", int32(op))
	}
	return [...]string{"add", "sub", "mul", "div", "gte"}[op]
}

func binop(op BinOp, x, y float32) float32 {
	switch op {
	case OpAdd:
		return x + y
	case OpSub:
		return x - y
	case OpMul:
		return x * y
	case OpDiv:
		return x / y
	case OpGreaterEq:
		if x >= y {
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("kernels: unknown binary op %d", op))
}

// BinaryRef computes y[i] = a[i*aStride] op b[i*bStride] for i < n. A
// stride of 0 broadcasts a scalar (Gorgonia's scalar-tensor ops, such as
// scaling a gradient by 1/SizeOf); 1 walks the operand. y may alias a or b.
// ops.Add runs it on contiguous operands, so that case gets its own loop.
func BinaryRef(op BinOp, n int, a []float32, aStride int, b []float32, bStride int, y []float32) {
	if op == OpAdd && aStride == 1 && bStride == 1 {
		a, b, y = a[:n], b[:n], y[:n]
		for i := range y {
			y[i] = a[i] + b[i]
		}
		return
	}
	for i := 0; i < n; i++ {
		y[i] = binop(op, a[i*aStride], b[i*bStride])
	}
}

// AddBiasRef computes y [N,D] = x + b broadcast along rows (ops.AddBias, and
// Gorgonia's BroadcastAdd over axis 0). y may alias x.
func AddBiasRef(n, d int, x, b, y []float32) {
	b = b[:d]
	for r := 0; r < n; r++ {
		xr, yr := x[r*d:(r+1)*d], y[r*d:(r+1)*d]
		for j, v := range xr {
			yr[j] = v + b[j]
		}
	}
}

// RepeatRowsRef writes y [N,D] with every row equal to b [D] (Gorgonia's
// Repeat along axis 0).
func RepeatRowsRef(n, d int, b, y []float32) {
	for r := 0; r < n; r++ {
		copy(y[r*d:(r+1)*d], b[:d])
	}
}

// SumChunk is the number of rows SumRowsRef adds before combining partial
// sums, as ops' LayerNormGradBeta (ops/layernorm.go sumChunk).
const SumChunk = 64

// SumRowsRef computes y [D] = Σ over rows of x [N,D] in ops' order: rows are
// added in chunks of SumChunk into per-chunk partial sums (AddRowsRef),
// which are then added in chunk order. ops' LayerNormGradBeta and the bias
// gradients of ops.AddBias and ops.Linear compute it chunk by chunk in
// parallel; Gorgonia's Σ[0] adds rows sequentially and agrees within a
// relative 1e-6*N.
func SumRowsRef(n, d int, x, y []float32) {
	clear(y[:d])
	part := make([]float32, d)
	for c := 0; c*SumChunk < n; c++ {
		clear(part)
		lo, hi := c*SumChunk, min((c+1)*SumChunk, n)
		AddRowsRef(hi-lo, d, x[lo*d:hi*d], part)
		AddRowsRef(1, d, part, y)
	}
}

// AddRowsRef adds the rows of x [N,D] into acc [D], in row order.
func AddRowsRef(n, d int, x, acc []float32) {
	acc = acc[:d]
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		row = row[:len(acc)] // drops bounds checks below
		// Four columns per iteration: independent adds, each column
		// still summed in row order.
		j := 0
		for ; j+3 < len(acc); j += 4 {
			acc[j] += row[j]
			acc[j+1] += row[j+1]
			acc[j+2] += row[j+2]
			acc[j+3] += row[j+3]
		}
		for ; j < len(acc); j++ {
			acc[j] += row[j]
		}
	}
}

// ReLURef computes y = max(x, 0) (ops.ReLU).
func ReLURef(n int, x, y []float32) {
	for i, v := range x[:n] {
		y[i] = max(v, 0)
	}
}

// ReLUGradRef computes dx = dy where the forward output y is not +0 and 0
// elsewhere: ops.ReLU's backward, which tests y's bits.
func ReLUGradRef(n int, y, dy, dx []float32) {
	for i := 0; i < n; i++ {
		u := math.Float32bits(y[i])
		m := uint32(int32(u|-u) >> 31)
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}

// GELURef computes ops.GELU, the tanh approximation GPT-2 uses, in float32
// (vecmath.GELU: vectorised, within about 1e-6 relative of the float64
// formula, and without the float64 tanh form's cancellation below x ≈ −5).
// The GPU kernel evaluates the tanh form in double; the parity test allows
// for the difference.
func GELURef(n int, x, y []float32) { vecmath.GELU(x[:n], y[:n]) }

// GELUGradRef computes dx = dy * GELU'(x) as ops' GELUGrad (vecmath.GELUGrad).
func GELUGradRef(n int, x, dy, dx []float32) { vecmath.GELUGrad(x[:n], dy[:n], dx[:n]) }

// GELUErfRef computes the exact GELU y = x Φ(x) = 0.5 x (1 + erf(x/√2)),
// in float64 per element (ops' GELUExact).
func GELUErfRef(n int, x, y []float32) {
	for i, v := range x[:n] {
		u := float64(v)
		y[i] = float32(0.5 * u * (1 + math.Erf(u/math.Sqrt2)))
	}
}

// GELUErfGradRef computes dx = dy * (Φ(x) + x φ(x)), the exact GELU's
// derivative, in float64 per element.
func GELUErfGradRef(n int, x, dy, dx []float32) {
	for i, v := range x[:n] {
		u := float64(v)
		d := 0.5*(1+math.Erf(u/math.Sqrt2)) + u*math.Exp(-0.5*u*u)/math.Sqrt(2*math.Pi)
		dx[i] = float32(float64(dy[i]) * d)
	}
}
