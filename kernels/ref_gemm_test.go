package kernels

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gemmTol bounds float32 rounding of a K-term dot product: the references
// sum in order, BLAS in blocks, so each may be off by about K ulps of Σ|ab|.
func gemmCheck(t *testing.T, what string, p GemmParams, a, b, got, want []float32) {
	t.Helper()
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= 1e-6*float64(p.K+1)*(1+math.Abs(float64(want[i])))) {
			t.Fatalf("%s[%d] = %g, want %g (K %d)", what, i, got[i], want[i], p.K)
		}
	}
}

func TestGemmRefMatchesBLAS(t *testing.T) {
	impl := gonum.Implementation{}
	for _, c := range []struct {
		name           string
		ta, tb         bool
		m, n, k        int
		alpha, beta    float32
		b0, b1, padLda int
	}{
		{"NN", false, false, 5, 7, 3, 1, 0, 1, 1, 0},
		{"NT batched", false, true, 17, 33, 31, 0.5, 0, 2, 3, 0},
		{"TN beta", true, false, 16, 9, 40, 1, 0.75, 3, 1, 2},
		{"TT padded", true, true, 1, 1, 1, -2, 1, 1, 2, 3},
		{"K=0", false, false, 3, 4, 0, 1, 0.5, 1, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ar, ac := c.m, c.k
			if c.ta {
				ar, ac = c.k, c.m
			}
			br, bc := c.k, c.n
			if c.tb {
				br, bc = c.n, c.k
			}
			p := GemmParams{TransA: c.ta, TransB: c.tb, M: c.m, N: c.n, K: c.k, Alpha: c.alpha, Beta: c.beta,
				LdA: max(ac, 1) + c.padLda, LdB: max(bc, 1), LdC: c.n, Batch: [2]int{c.b0, c.b1}, OffA: 1, OffB: 2, OffC: 3}
			sa, sb, sc := ar*p.LdA, br*p.LdB, c.m*c.n
			p.StrideA = [2]int{c.b1 * sa, sa}
			p.StrideB = [2]int{c.b1 * sb, sb}
			p.StrideC = [2]int{c.b1 * sc, sc}
			nb := c.b0 * c.b1
			a, b := randF(40, 1+nb*sa, 1), randF(41, 2+nb*sb, 1)
			cc := randF(42, 3+nb*sc, 1)
			want := append([]float32(nil), cc...)
			if err := GemmRef(p, a, b, cc); err != nil {
				t.Fatal(err)
			}
			tr := func(x bool) blas.Transpose {
				if x {
					return blas.Trans
				}
				return blas.NoTrans
			}
			for i := 0; i < nb; i++ {
				impl.Sgemm(tr(c.ta), tr(c.tb), c.m, c.n, c.k, c.alpha, a[1+i*sa:], p.LdA, b[2+i*sb:], p.LdB, c.beta, want[3+i*sc:], p.LdC)
			}
			gemmCheck(t, "C", p, a, b, cc, want)
		})
	}
}

func TestGemmValidate(t *testing.T) {
	ok := GemmParams{M: 2, N: 3, K: 4, LdA: 4, LdB: 3, LdC: 3}
	for _, c := range []struct {
		name       string
		p          GemmParams
		la, lb, lc int
		bad        bool
	}{
		{"fits", ok, 8, 12, 6, false},
		{"A short", ok, 7, 12, 6, true},
		{"C short", ok, 8, 12, 5, true},
		{"small ld", GemmParams{M: 2, N: 3, K: 4, LdA: 3, LdB: 3, LdC: 3}, 8, 12, 6, true},
		{"negative", GemmParams{M: -1, LdA: 1, LdB: 1, LdC: 1}, 8, 12, 6, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.p.Validate(c.la, c.lb, c.lc); (err != nil) != c.bad {
				t.Fatalf("Validate = %v, want error %v", err, c.bad)
			}
		})
	}
}

// TestAttnGemmGeometry checks AttnGemm's strides and offsets against the
// per-head products written with explicit indices: head h of batch b is
// columns h*dk.. of rows b*T.. of a [B*T, D] matrix.
func TestAttnGemmGeometry(t *testing.T) {
	b, h, tq, tk, d := 2, 3, 5, 4, 12
	dk, scale := d/h, float32(0.3)
	q, k := randF(50, b*tq*d, 1), randF(51, b*tk*d, 1) // [B*Tq, D], [B*Tk, D]
	s := randF(52, b*h*tq*tk, 1)                       // [B, H, Tq, Tk]
	o := randF(55, b*tq*d, 1)                          // [B*Tq, D]
	at := func(m []float32, bi, t, T, hh, x int) float64 { return float64(m[(bi*T+t)*d+hh*dk+x]) }
	st := func(bi, hh, i, j int) int { return ((bi*h+hh)*tq+i)*tk + j }
	want := map[AttnKind][]float64{}
	for _, kind := range []AttnKind{AttnScores, AttnValuesGradP} {
		want[kind] = make([]float64, b*h*tq*tk)
	}
	for _, kind := range []AttnKind{AttnScoresGradQ, AttnValues} {
		want[kind] = make([]float64, b*tq*d)
	}
	for _, kind := range []AttnKind{AttnScoresGradK, AttnValuesGradV} {
		want[kind] = make([]float64, b*tk*d)
	}
	for bi := 0; bi < b; bi++ {
		for hh := 0; hh < h; hh++ {
			for i := 0; i < tq; i++ {
				for j := 0; j < tk; j++ {
					for x := 0; x < dk; x++ {
						sc := float64(s[st(bi, hh, i, j)])
						want[AttnScores][st(bi, hh, i, j)] += float64(scale) * at(q, bi, i, tq, hh, x) * at(k, bi, j, tk, hh, x)
						want[AttnValuesGradP][st(bi, hh, i, j)] += at(o, bi, i, tq, hh, x) * at(k, bi, j, tk, hh, x)
						want[AttnScoresGradQ][(bi*tq+i)*d+hh*dk+x] += float64(scale) * sc * at(k, bi, j, tk, hh, x)
						want[AttnValues][(bi*tq+i)*d+hh*dk+x] += sc * at(k, bi, j, tk, hh, x)
						want[AttnScoresGradK][(bi*tk+j)*d+hh*dk+x] += float64(scale) * sc * at(q, bi, i, tq, hh, x)
						want[AttnValuesGradV][(bi*tk+j)*d+hh*dk+x] += sc * at(o, bi, i, tq, hh, x)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		kind AttnKind
		x, y []float32
	}{
		{AttnScores, q, k}, {AttnScoresGradQ, s, k}, {AttnScoresGradK, s, q},
		{AttnValues, s, k}, {AttnValuesGradP, o, k}, {AttnValuesGradV, s, o},
	} {
		t.Run(fmt.Sprint(c.kind), func(t *testing.T) {
			got := make([]float32, len(want[c.kind]))
			if err := GemmRef(AttnGemm(c.kind, b, h, tq, tk, d, scale), c.x, c.y, got); err != nil {
				t.Fatal(err)
			}
			near64(t, "product", got, want[c.kind], 1e-5)
		})
	}
}

// TestBuiltinsMatchGorgonia covers the Gorgonia built-ins of the training
// graphs: matmul (and its transposed backward products), +, ⊙, Rectify's
// >=, BroadcastAdd's Repeat and Σ[0], and Transpose.
func TestBuiltinsMatchGorgonia(t *testing.T) {
	n, in, out := 6, 5, 4
	x, w, bias := randF(60, n*in, 1), randF(61, in*out, 1), randF(62, out, 1)
	dy := randF(63, n*out, 1)
	t.Run("linear", func(t *testing.T) {
		res := runOp(t, []*tensor.Dense{dense(x, n, in), dense(w, in, out), dense(bias, out)}, []int{0, 1, 2}, dy,
			func(v []*G.Node) (*G.Node, error) {
				return G.BroadcastAdd(G.Must(G.Mul(v[0], v[1])), v[2], nil, []byte{0})
			})
		y := make([]float32, n*out)
		fw := GemmParams{M: n, N: out, K: in, Alpha: 1, LdA: in, LdB: out, LdC: out}
		if err := GemmRef(fw, x, w, y); err != nil {
			t.Fatal(err)
		}
		rep := make([]float32, n*out)
		RepeatRowsRef(n, out, bias, rep)
		BinaryRef(OpAdd, n*out, y, 1, rep, 1, y)
		gemmCheck(t, "y", fw, nil, nil, y, res.y)
		dx, dw, db := make([]float32, n*in), make([]float32, in*out), make([]float32, out)
		bx := GemmParams{TransB: true, M: n, N: in, K: out, Alpha: 1, LdA: out, LdB: out, LdC: in}
		bw := GemmParams{TransA: true, M: in, N: out, K: n, Alpha: 1, LdA: in, LdB: out, LdC: out}
		if err := GemmRef(bx, dy, w, dx); err != nil {
			t.Fatal(err)
		}
		if err := GemmRef(bw, x, dy, dw); err != nil {
			t.Fatal(err)
		}
		SumRowsRef(n, out, dy, db)
		gemmCheck(t, "dx", bx, nil, nil, dx, res.grads[0])
		gemmCheck(t, "dw", bw, nil, nil, dw, res.grads[1])
		// Gorgonia's Σ[0] adds rows sequentially; with fewer than SumChunk
		// rows the orders coincide.
		same(t, "db", db, res.grads[2])
	})
	t.Run("rectify", func(t *testing.T) {
		xs := append([]float32{0, float32(math.Copysign(0, -1))}, randF(64, 99, 1)...)
		dys := randF(65, len(xs), 1)
		res := runOp(t, []*tensor.Dense{dense(xs, len(xs))}, []int{0}, dys, func(v []*G.Node) (*G.Node, error) { return G.Rectify(v[0]) })
		m := len(xs)
		gte, y, dx := make([]float32, m), make([]float32, m), make([]float32, m)
		BinaryRef(OpGreaterEq, m, xs, 1, []float32{0}, 0, gte)
		BinaryRef(OpMul, m, xs, 1, gte, 1, y)
		BinaryRef(OpMul, m, dys, 1, gte, 1, dx)
		same(t, "y", y, res.y)
		same(t, "dx", dx, res.grads[0])
	})
	t.Run("hadamard", func(t *testing.T) {
		a, b := randF(66, 30, 2), randF(67, 30, 2)
		res := runOp(t, []*tensor.Dense{dense(a, 5, 6), dense(b, 5, 6)}, nil, nil, func(v []*G.Node) (*G.Node, error) { return G.HadamardProd(v[0], v[1]) })
		y := make([]float32, 30)
		BinaryRef(OpMul, 30, a, 1, b, 1, y)
		same(t, "y", y, res.y)
	})
	t.Run("transpose", func(t *testing.T) {
		a := randF(68, 35, 2)
		res := runOp(t, []*tensor.Dense{dense(a, 5, 7)}, nil, nil, func(v []*G.Node) (*G.Node, error) { return G.Transpose(v[0]) })
		y := make([]float32, 35)
		Transpose2DRef(5, 7, a, y)
		same(t, "y", y, res.y)
	})
}

func TestRoundTF32(t *testing.T) {
	for _, c := range []struct {
		name string
		in   float32
		want float32
	}{
		{"exact", 1.5, 1.5},
		{"below half rounds down", math.Float32frombits(0x3f800fff), 1},
		{"half rounds away", math.Float32frombits(0x3f801000), math.Float32frombits(0x3f802000)},
		{"negative half rounds away", math.Float32frombits(0xbf801000), math.Float32frombits(0xbf802000)},
		{"carry into exponent", math.Float32frombits(0x3ffff000), 2},
		{"infinity", float32(math.Inf(1)), float32(math.Inf(1))},
		{"zero", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RoundTF32(c.in); math.Float32bits(got) != math.Float32bits(c.want) {
				t.Fatalf("RoundTF32(%#x) = %#x, want %#x", math.Float32bits(c.in), math.Float32bits(got), math.Float32bits(c.want))
			}
		})
	}
	if got := RoundTF32(float32(math.NaN())); got == got {
		t.Fatal("NaN not kept")
	}
}

// K=0 with a batch and non-zero operand strides reads nothing from A and B,
// so empty operands are valid: C = Beta*C.
func TestGemmRefEmptyK(t *testing.T) {
	p := GemmParams{M: 2, N: 2, K: 0, LdA: 1, LdB: 2, LdC: 2, Alpha: 1, Beta: 0.5,
		Batch: [2]int{1, 2}, StrideA: [2]int{0, 4}, StrideB: [2]int{0, 4}, StrideC: [2]int{0, 4}}
	c := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	if err := GemmRef(p, nil, nil, c); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4} {
		if c[i] != want {
			t.Fatalf("C = %v, want Beta*C", c)
		}
	}
}
