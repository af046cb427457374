package kernels

import (
	"fmt"
	"math"
)

// cublasOperand is one matrix argument of a column-major strided-batched
// GEMM call: its element offset into the buffer, leading dimension, and
// the element stride between the call's batch members.
type cublasOperand struct {
	Off    int   // element offset of batch member 0
	Ld     int   // leading dimension (column stride, column-major)
	Stride int64 // elements between batch members
}

// cublasCall is one column-major strided-batched GEMM, in the meaning of
// cublasGemmStridedBatchedEx:
//
//	C[i + j*ldc] = Alpha * sum_k opA(i, k) opB(k, j) + Beta * C[i + j*ldc]
//
// for i < M, j < N, with opA(i, k) = A[i + k*lda] (TransA false) or
// A[k + i*lda] (true), likewise opB, over Batch members. The call's A
// operand reads the row-major product's B buffer and its B operand reads
// the product's A buffer (see cublasCalls).
type cublasCall struct {
	TransA, TransB bool    // op of the call's A and B operands
	M, N, K        int     // column-major dimensions of the call
	Alpha, Beta    float32 // scalars, as in GemmParams
	A, B, C        cublasOperand
	Batch          int // batch members of this call
}

// cublasCalls maps a row-major GemmParams onto column-major cuBLAS calls.
//
// Row-major C = op(A) op(B) is, read column-major with the same storage,
// Cᵀ = op(B)ᵀ op(A)ᵀ; a row-major matrix with row stride ld is its
// transpose column-major with leading dimension ld. So each call computes
// with the operands swapped: the call's A is GemmParams' B (op T exactly
// when TransB), its B is GemmParams' A (op T when TransA), M and N swap.
//
// cuBLAS's strided batch has one stride per operand, GemmParams two batch
// levels. One call covers both when each operand's level-0 stride is
// b1 times its level-1 stride (the batch is then one arithmetic sequence),
// or when a level has extent 1; otherwise one call per member of the level
// with fewer members, each batched over the other level, so attention's
// (batch, head) products take h calls.
func cublasCalls(p GemmParams) ([]cublasCall, error) {
	for _, v := range []int{p.M, p.N, p.K, p.LdA, p.LdB, p.LdC} {
		if v > math.MaxInt32 {
			return nil, fmt.Errorf("cublas: gemm dimension %d exceeds int32", v)
		}
	}
	b0, b1 := p.Batches()
	if b0*b1 > math.MaxInt32 {
		return nil, fmt.Errorf("cublas: gemm batch %d x %d exceeds int32", b0, b1)
	}
	base := cublasCall{
		TransA: p.TransB, TransB: p.TransA,
		M: p.N, N: p.M, K: p.K,
		Alpha: p.Alpha, Beta: p.Beta,
		A: cublasOperand{Off: p.OffB, Ld: p.LdB},
		B: cublasOperand{Off: p.OffA, Ld: p.LdA},
		C: cublasOperand{Off: p.OffC, Ld: p.LdC},
	}
	// level returns the call batched over one level (0 or 1) with offsets
	// shifted by i members of the other level.
	level := func(lv, i int) cublasCall {
		c := base
		o := 1 - lv
		c.A.Off += i * p.StrideB[o]
		c.B.Off += i * p.StrideA[o]
		c.C.Off += i * p.StrideC[o]
		c.A.Stride, c.B.Stride, c.C.Stride = int64(p.StrideB[lv]), int64(p.StrideA[lv]), int64(p.StrideC[lv])
		c.Batch = []int{b0, b1}[lv]
		return c
	}
	collapses := func(s [2]int) bool { return s[0] == b1*s[1] }
	switch {
	case b0 == 1:
		return []cublasCall{level(1, 0)}, nil
	case b1 == 1:
		return []cublasCall{level(0, 0)}, nil
	case collapses(p.StrideA) && collapses(p.StrideB) && collapses(p.StrideC):
		c := level(1, 0)
		c.Batch = b0 * b1
		return []cublasCall{c}, nil
	}
	lv, outer := 1, b0 // batch over the larger level, loop over the smaller
	if b0 > b1 {
		lv, outer = 0, b1
	}
	calls := make([]cublasCall, outer)
	for i := range calls {
		calls[i] = level(lv, i)
	}
	return calls, nil
}
