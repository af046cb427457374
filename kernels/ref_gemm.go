package kernels

import (
	"fmt"
	"math"
)

// GemmParams describes a row-major strided-batched matrix product
//
//	C = Alpha op(A) op(B) + Beta C
//
// with op(A) [M, K], op(B) [K, N], C [M, N], over a batch of
// Batch[0] x Batch[1] products. Product (i, j) reads A from
// OffA + i*StrideA[0] + j*StrideA[1] (likewise B and C), so the per-head
// products of attention are plain GEMMs over (batch, head) with offsets.
type GemmParams struct {
	// TransA and TransB select op(X) = Xᵀ; A is then stored [K, M].
	TransA, TransB bool
	// M, N and K are the product's dimensions (K may be 0: C = Beta C).
	M, N, K int
	// Alpha scales the product; Beta scales C. Beta 0 ignores C's old
	// contents entirely (NaN in C does not propagate), as BLAS does.
	Alpha, Beta float32
	// LdA, LdB and LdC are the row strides (leading dimensions) of the
	// stored matrices.
	LdA, LdB, LdC int
	// Batch is the number of products along the two batch levels; 0 is
	// taken as 1.
	Batch [2]int
	// StrideA, StrideB and StrideC are the element offsets between
	// consecutive products along each batch level.
	StrideA, StrideB, StrideC [2]int
	// OffA, OffB and OffC are the element offsets of product (0, 0).
	OffA, OffB, OffC int
}

// Batches returns the two batch extents with 0 taken as 1.
func (p GemmParams) Batches() (int, int) {
	return max(p.Batch[0], 1), max(p.Batch[1], 1)
}

// Offsets returns where product (i, j) of the batch starts in A, B and C.
func (p GemmParams) Offsets(i, j int) (a, b, c int) {
	return p.OffA + i*p.StrideA[0] + j*p.StrideA[1],
		p.OffB + i*p.StrideB[0] + j*p.StrideB[1],
		p.OffC + i*p.StrideC[0] + j*p.StrideC[1]
}

// extent returns one past the largest element index a product reads or
// writes in a matrix stored with rows rows of cols columns.
func extent(off int, stride [2]int, b0, b1, rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return off + (b0-1)*stride[0] + (b1-1)*stride[1] + (rows-1)*ld + cols
}

// Validate checks the dimensions and that every product stays inside
// slices of the given lengths.
func (p GemmParams) Validate(lenA, lenB, lenC int) error {
	if p.M < 0 || p.N < 0 || p.K < 0 || p.Batch[0] < 0 || p.Batch[1] < 0 {
		return fmt.Errorf("gemm: negative size in %+v", p)
	}
	if p.OffA < 0 || p.OffB < 0 || p.OffC < 0 {
		return fmt.Errorf("gemm: negative offset in %+v", p)
	}
	for _, s := range [][2]int{p.StrideA, p.StrideB, p.StrideC} {
		if s[0] < 0 || s[1] < 0 {
			return fmt.Errorf("gemm: negative stride in %+v", p)
		}
	}
	ar, ac := p.M, p.K
	if p.TransA {
		ar, ac = p.K, p.M
	}
	br, bc := p.K, p.N
	if p.TransB {
		br, bc = p.N, p.K
	}
	if p.LdA < max(ac, 1) || p.LdB < max(bc, 1) || p.LdC < max(p.N, 1) {
		return fmt.Errorf("gemm: leading dimension too small in %+v", p)
	}
	b0, b1 := p.Batches()
	if e := extent(p.OffA, p.StrideA, b0, b1, ar, ac, p.LdA); e > lenA {
		return fmt.Errorf("gemm: A needs %d elements, has %d", e, lenA)
	}
	if e := extent(p.OffB, p.StrideB, b0, b1, br, bc, p.LdB); e > lenB {
		return fmt.Errorf("gemm: B needs %d elements, has %d", e, lenB)
	}
	if e := extent(p.OffC, p.StrideC, b0, b1, p.M, p.N, p.LdC); e > lenC {
		return fmt.Errorf("gemm: C needs %d elements, has %d", e, lenC)
	}
	return nil
}

// Flops returns the floating-point operations of the whole batch (2MNK per
// product), for throughput figures.
func (p GemmParams) Flops() float64 {
	b0, b1 := p.Batches()
	return 2 * float64(p.M) * float64(p.N) * float64(p.K) * float64(b0*b1)
}

// RoundTF32 rounds x to the nearest TF32 value (8 exponent and 10 mantissa
// bits, so the low 13 bits of the float32 are zero), ties away from zero:
// what the tensor cores see of each input of gemm_tf32 (cvt.rna.tf32.f32).
// Infinities and NaN pass unchanged.
func RoundTF32(x float32) float32 {
	u := math.Float32bits(x)
	if u&0x7f800000 != 0x7f800000 {
		u = (u + 0x1000) &^ 0x1fff
	}
	return math.Float32frombits(u)
}

// GemmRef computes the batched product on the CPU. Each element's dot
// product accumulates in float32 in increasing k, then C = Alpha*dot +
// Beta*C. BLAS libraries block and vectorise the sum, so results agree with
// ops' OpenBLAS/gonum products within a relative 1e-5*sqrt(K)-scaled
// tolerance (see the tests), not bit for bit.
func GemmRef(p GemmParams, a, b, c []float32) error {
	if err := p.Validate(len(a), len(b), len(c)); err != nil {
		return err
	}
	b0, b1 := p.Batches()
	for i := 0; i < b0; i++ {
		for j := 0; j < b1; j++ {
			oa, ob, oc := p.Offsets(i, j)
			if p.K == 0 {
				// Validate does not bound A and B when nothing is read.
				oa, ob = 0, 0
			}
			gemm1(p, a[oa:], b[ob:], c[oc:])
		}
	}
	return nil
}

func gemm1(p GemmParams, a, b, c []float32) {
	for m := 0; m < p.M; m++ {
		for n := 0; n < p.N; n++ {
			var s float32
			for k := 0; k < p.K; k++ {
				var x, y float32
				if p.TransA {
					x = a[k*p.LdA+m]
				} else {
					x = a[m*p.LdA+k]
				}
				if p.TransB {
					y = b[n*p.LdB+k]
				} else {
					y = b[k*p.LdB+n]
				}
				s += x * y
			}
			r := p.Alpha * s
			if p.Beta != 0 {
				r += p.Beta * c[m*p.LdC+n]
			}
			c[m*p.LdC+n] = r
		}
	}
}

// AttnKind names the six per-head attention products of package ops
// (ops/heads.go), in its order.
type AttnKind int

const (
	// AttnScores: (q, k) -> S = scale q kᵀ, S [B,H,Tq,Tk].
	AttnScores AttnKind = iota
	// AttnScoresGradQ: (dS, k) -> dq = scale dS k, dq [B*Tq, D].
	AttnScoresGradQ
	// AttnScoresGradK: (dS, q) -> dk = scale dSᵀ q, dk [B*Tk, D].
	AttnScoresGradK
	// AttnValues: (p, v) -> o = p v, o [B*Tq, D].
	AttnValues
	// AttnValuesGradP: (dO, v) -> dP = dO vᵀ, dP [B,H,Tq,Tk].
	AttnValuesGradP
	// AttnValuesGradV: (p, dO) -> dv = pᵀ dO, dv [B*Tk, D].
	AttnValuesGradV
)

// AttnGemm returns the GemmParams of one per-head attention product over
// batch b, heads h, query length tq, key length tk and model width d
// (head width d/h), with the operands in ops' order. scale applies to the
// AttnScores family; the AttnValues family ignores it (scale 1), as ops does.
func AttnGemm(kind AttnKind, b, h, tq, tk, d int, scale float32) GemmParams {
	dk := d / h
	blk := [2]int{h * tq * tk, tq * tk} // [B,H,Tq,Tk] block per (b, h)
	rowQ := [2]int{tq * d, dk}          // head block of [B*Tq, D]
	rowK := [2]int{tk * d, dk}          // head block of [B*Tk, D]
	p := GemmParams{Batch: [2]int{b, h}, Alpha: 1}
	switch kind {
	case AttnScores:
		p.M, p.N, p.K, p.TransB, p.Alpha = tq, tk, dk, true, scale
		p.LdA, p.LdB, p.LdC = d, d, tk
		p.StrideA, p.StrideB, p.StrideC = rowQ, rowK, blk
	case AttnScoresGradQ:
		p.M, p.N, p.K, p.Alpha = tq, dk, tk, scale
		p.LdA, p.LdB, p.LdC = tk, d, d
		p.StrideA, p.StrideB, p.StrideC = blk, rowK, rowQ
	case AttnScoresGradK:
		p.M, p.N, p.K, p.TransA, p.Alpha = tk, dk, tq, true, scale
		p.LdA, p.LdB, p.LdC = tk, d, d
		p.StrideA, p.StrideB, p.StrideC = blk, rowQ, rowK
	case AttnValues:
		p.M, p.N, p.K = tq, dk, tk
		p.LdA, p.LdB, p.LdC = tk, d, d
		p.StrideA, p.StrideB, p.StrideC = blk, rowK, rowQ
	case AttnValuesGradP:
		p.M, p.N, p.K, p.TransB = tq, tk, dk, true
		p.LdA, p.LdB, p.LdC = d, d, tk
		p.StrideA, p.StrideB, p.StrideC = rowQ, rowK, blk
	case AttnValuesGradV:
		p.M, p.N, p.K, p.TransA = tk, dk, tq, true
		p.LdA, p.LdB, p.LdC = tk, d, d
		p.StrideA, p.StrideB, p.StrideC = blk, rowQ, rowK
	default:
		panic(fmt.Sprintf("kernels: unknown attention kind %d", kind))
	}
	return p
}

// CacheGemm rewrites AttnGemm's AttnScores or AttnValues product p over
// batch b and model width d for keys (or values) held position-major,
// [Tk*b, d] with key j of batch row r at row j*b + r: the layout of a
// decoding cache, which grows by b rows per position.
func CacheGemm(p GemmParams, b, d int) GemmParams {
	p.LdB, p.StrideB[0] = b*d, d
	return p
}

// Transpose2DRef writes y [cols, rows] = xᵀ for x [rows, cols] (Gorgonia's
// Transpose of a matrix, materialised).
func Transpose2DRef(rows, cols int, x, y []float32) {
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			y[c*rows+r] = x[r*cols+c]
		}
	}
}
