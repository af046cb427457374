package kernels

import (
	"fmt"
	"math"
	"testing"
)

// colMajorGemm executes calls with cublasGemmStridedBatchedEx's
// column-major semantics (summing k in increasing order, as GemmRef), with
// a the call's A buffer, b its B buffer. It checks cuBLAS's argument rules
// (lda >= max(1, rows of the stored A), likewise ldb, ldc >= max(1, M)) and
// that every access stays inside the buffers.
func colMajorGemm(calls []cublasCall, a, b, c []float32) error {
	for _, cl := range calls {
		ar, br := cl.M, cl.K // rows of the stored operands (column-major)
		if cl.TransA {
			ar = cl.K
		}
		if cl.TransB {
			br = cl.N
		}
		if cl.A.Ld < max(1, ar) || cl.B.Ld < max(1, br) || cl.C.Ld < max(1, cl.M) {
			return fmt.Errorf("leading dimension too small in %+v", cl)
		}
		if cl.M <= 0 || cl.N <= 0 || cl.K < 0 || cl.Batch <= 0 {
			return fmt.Errorf("bad sizes in %+v", cl)
		}
		at := func(x []float32, o cublasOperand, bi, i int) (float32, error) {
			idx := o.Off + int(int64(bi)*o.Stride) + i
			if idx < 0 || idx >= len(x) {
				return 0, fmt.Errorf("index %d outside %d in %+v", idx, len(x), cl)
			}
			return x[idx], nil
		}
		for bi := 0; bi < cl.Batch; bi++ {
			for j := 0; j < cl.N; j++ {
				for i := 0; i < cl.M; i++ {
					var s float32
					for k := 0; k < cl.K; k++ {
						ia, ib := i+k*cl.A.Ld, k+j*cl.B.Ld
						if cl.TransA {
							ia = k + i*cl.A.Ld
						}
						if cl.TransB {
							ib = j + k*cl.B.Ld
						}
						x, err := at(a, cl.A, bi, ia)
						if err != nil {
							return err
						}
						y, err := at(b, cl.B, bi, ib)
						if err != nil {
							return err
						}
						// The call's A is the row-major B: multiply in
						// GemmRef's operand order for bit equality.
						s += y * x
					}
					ic := cl.C.Off + int(int64(bi)*cl.C.Stride) + i + j*cl.C.Ld
					if ic < 0 || ic >= len(c) {
						return fmt.Errorf("C index %d outside %d in %+v", ic, len(c), cl)
					}
					r := cl.Alpha * s
					if cl.Beta != 0 {
						r += cl.Beta * c[ic]
					}
					c[ic] = r
				}
			}
		}
	}
	return nil
}

// packed returns GemmParams for dense products laid out one after another
// in batch order (so the two batch levels collapse into one), with pad
// extra columns in every leading dimension and offsets off, 2off, 3off.
func packed(ta, tb bool, m, n, k, b0, b1, pad, off int, beta float32) GemmParams {
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	p := GemmParams{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 0.7, Beta: beta,
		LdA: max(ac, 1) + pad, LdB: max(bc, 1) + pad, LdC: n + pad, Batch: [2]int{b0, b1},
		OffA: off, OffB: 2 * off, OffC: 3 * off}
	sa, sb, sc := ar*p.LdA, br*p.LdB, m*p.LdC
	p.StrideA, p.StrideB, p.StrideC = [2]int{b1 * sa, sa}, [2]int{b1 * sb, sb}, [2]int{b1 * sc, sc}
	return p
}

// gemmLens returns the buffer lengths p reads and writes.
func gemmLens(p GemmParams) (int, int, int) {
	b0, b1 := p.Batches()
	ar, ac, br, bc := p.M, p.K, p.K, p.N
	if p.TransA {
		ar, ac = ac, ar
	}
	if p.TransB {
		br, bc = bc, br
	}
	return extent(p.OffA, p.StrideA, b0, b1, ar, ac, p.LdA),
		extent(p.OffB, p.StrideB, b0, b1, br, bc, p.LdB),
		extent(p.OffC, p.StrideC, b0, b1, p.M, p.N, p.LdC)
}

func TestCublasCallsMatchGemmRef(t *testing.T) {
	// Non-collapsing batch levels: level 1 strides laid out as an outer
	// level (level 0 inner), so one call per member of the smaller level.
	swapped := packed(false, true, 5, 7, 3, 3, 4, 0, 0, 0)
	swapped.StrideA = [2]int{swapped.StrideA[1], 3 * swapped.StrideA[1]}
	swapped.StrideB = [2]int{swapped.StrideB[1], 3 * swapped.StrideB[1]}
	swapped.StrideC = [2]int{swapped.StrideC[1], 3 * swapped.StrideC[1]}
	wide := swapped // larger level 0: batched over level 0, loop level 1
	wide.Batch = [2]int{4, 3}
	wide.StrideA = [2]int{wide.StrideA[0], 4 * wide.StrideA[0]}
	wide.StrideB = [2]int{wide.StrideB[0], 4 * wide.StrideB[0]}
	wide.StrideC = [2]int{wide.StrideC[0], 4 * wide.StrideC[0]}
	bcast := packed(false, false, 6, 5, 4, 2, 3, 1, 2, 0.25)
	bcast.StrideB = [2]int{0, 0} // one B shared by every product
	// GemmRef slices A and B at each product's offset even when K is 0 and
	// nothing is read, so K=0 batches keep A's and B's offsets in range.
	k0 := packed(false, true, 4, 3, 0, 2, 1, 0, 0, 0)
	k0.StrideA, k0.StrideB = [2]int{}, [2]int{}
	halfBcast := packed(true, false, 6, 5, 4, 2, 3, 0, 0, 0)
	halfBcast.StrideA = [2]int{halfBcast.StrideA[1], 0} // A per level 0 only
	for _, c := range []struct {
		name  string
		p     GemmParams
		calls int
	}{
		{"1x1x1", packed(false, false, 1, 1, 1, 1, 1, 0, 0, 0), 1},
		{"NN odd", packed(false, false, 17, 33, 31, 1, 1, 0, 0, 0), 1},
		{"NT", packed(false, true, 9, 4, 6, 1, 1, 0, 0, 1), 1},
		{"TN", packed(true, false, 9, 4, 6, 1, 1, 0, 0, 0.5), 1},
		{"TT", packed(true, true, 9, 4, 6, 1, 1, 0, 0, 0), 1},
		{"padded ld and offsets", packed(true, false, 7, 5, 3, 1, 1, 3, 5, 1), 1},
		{"K=0 scales C", packed(false, false, 4, 3, 0, 1, 1, 0, 0, 0.5), 1},
		{"K=0 beta 0 clears C", k0, 1},
		{"level 0 only", packed(false, true, 5, 6, 7, 3, 1, 0, 0, 0), 1},
		{"level 1 only", packed(true, true, 5, 6, 7, 1, 3, 2, 1, 0.5), 1},
		{"levels collapse", packed(false, true, 37, 45, 19, 2, 3, 0, 0, 0.5), 1},
		{"levels collapse padded", packed(true, false, 8, 3, 5, 3, 2, 1, 4, 0), 1},
		{"levels swapped", swapped, 3},
		{"level 0 larger", wide, 3},
		{"B broadcast", bcast, 1},
		{"A per level 0", halfBcast, 2},
		{"attn scores", AttnGemm(AttnScores, 3, 2, 5, 4, 8, 0.3), 2},
		{"attn scores grad q", AttnGemm(AttnScoresGradQ, 3, 2, 5, 4, 8, 0.3), 2},
		{"attn scores grad k", AttnGemm(AttnScoresGradK, 3, 2, 5, 4, 8, 0.3), 2},
		{"attn values", AttnGemm(AttnValues, 2, 4, 3, 6, 8, 1), 2},
		{"attn values grad p", AttnGemm(AttnValuesGradP, 2, 4, 3, 6, 8, 1), 2},
		{"attn values grad v", AttnGemm(AttnValuesGradV, 2, 4, 3, 6, 8, 1), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			la, lb, lc := gemmLens(c.p)
			a, b, cc := randF(1, la, 1), randF(2, lb, 1), randF(3, lc, 1)
			if c.p.Beta == 0 {
				cc[len(cc)-1] = float32(math.NaN()) // beta 0 must not read C
			}
			want := append([]float32(nil), cc...)
			if err := GemmRef(c.p, a, b, want); err != nil {
				t.Fatal(err)
			}
			calls, err := cublasCalls(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) != c.calls {
				t.Errorf("%d calls, want %d", len(calls), c.calls)
			}
			got := append([]float32(nil), cc...)
			if err := colMajorGemm(calls, b, a, got); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("C[%d] = %g, want %g", i, got[i], want[i])
				}
			}
		})
	}
}

func TestCublasCallsRejectsInt32Overflow(t *testing.T) {
	p := GemmParams{M: 1, N: 1, K: 1, LdA: math.MaxInt32 + 1, LdB: 1, LdC: 1}
	if _, err := cublasCalls(p); err == nil {
		t.Fatal("no error for a leading dimension beyond int32")
	}
}
