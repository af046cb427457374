//go:build gpu || gpuemu

package kernels

import (
	"math"
	"os"
	"testing"
)

// Parity tests: every launcher against its reference on random and edge
// inputs. Tolerances: "bit" kernels must match exactly; reductions whose
// order differs from the reference get atol 1e-6 / rtol 1e-5 (float32) or
// 1e-12 relative (float64 sums); the TF32 GEMM, whose inputs keep 10
// mantissa bits, is checked against the reference on operands rounded the
// same way (RoundTF32).
//
// Without a GPU the test binary exits 0 in cudaguard's init (skipped);
// COMPBENCH_REQUIRE_GPU=1 makes that a failure.

var dev *Device

func TestMain(m *testing.M) {
	var err error
	if dev, err = Open(0); err != nil {
		os.Stderr.WriteString("compbench/kernels: " + err.Error() + "\n")
		os.Exit(1)
	}
	code := m.Run()
	dev.Close()
	os.Exit(code)
}

func up(t testing.TB, x []float32) Buf {
	t.Helper()
	b, err := dev.Alloc(max(len(x), 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.Upload(b, x); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(b) })
	return b
}

func upInt(t testing.TB, x []int32) Buf {
	t.Helper()
	b, err := dev.Alloc(max(len(x), 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.UploadInt32(b, x); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Free(b) })
	return b
}

func down(t testing.TB, b Buf, n int) []float32 {
	t.Helper()
	x := make([]float32, n)
	if err := dev.Download(x, b); err != nil {
		t.Fatal(err)
	}
	return x
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestKernelsPresent(t *testing.T) {
	for _, n := range Kernels() {
		if _, err := dev.fn(n); err != nil {
			t.Error(err)
		}
	}
}

func TestGemmParity(t *testing.T) {
	for _, mode := range []GemmMode{GemmFP32, GemmTF32, GemmCublas} {
		for _, c := range []struct {
			name    string
			ta, tb  bool
			m, n, k int
			b0, b1  int
			beta    float32
		}{
			{"1x1x1", false, false, 1, 1, 1, 1, 1, 0},
			{"odd NN", false, false, 17, 33, 31, 1, 1, 0},
			{"odd NT batched", false, true, 37, 45, 19, 2, 3, 0.5},
			{"TN", true, false, 64, 64, 64, 1, 2, 0},
			{"TT big", true, true, 200, 130, 257, 1, 1, 1},
		} {
			if mode == GemmTF32 && !dev.TensorCores() {
				continue
			}
			t.Run(c.name, func(t *testing.T) {
				if mode == GemmCublas {
					skipNoCublas(t)
				}
				ar, ac := c.m, c.k
				if c.ta {
					ar, ac = c.k, c.m
				}
				br, bc := c.k, c.n
				if c.tb {
					br, bc = c.n, c.k
				}
				p := GemmParams{TransA: c.ta, TransB: c.tb, M: c.m, N: c.n, K: c.k, Alpha: 0.7, Beta: c.beta,
					LdA: ac, LdB: bc, LdC: c.n, Batch: [2]int{c.b0, c.b1}}
				sa, sb, sc := ar*ac, br*bc, c.m*c.n
				p.StrideA, p.StrideB, p.StrideC = [2]int{c.b1 * sa, sa}, [2]int{c.b1 * sb, sb}, [2]int{c.b1 * sc, sc}
				nb := c.b0 * c.b1
				a, b, cc := randF(1, nb*sa, 1), randF(2, nb*sb, 1), randF(3, nb*sc, 1)
				ga, gb, gc := up(t, a), up(t, b), up(t, cc)
				ra, rb := a, b
				if mode == GemmTF32 {
					// The tensor cores see TF32 operands; their products are
					// exact in float32, so only the summation order differs.
					ra, rb = make([]float32, len(a)), make([]float32, len(b))
					for i := range a {
						ra[i] = RoundTF32(a[i])
					}
					for i := range b {
						rb[i] = RoundTF32(b[i])
					}
				}
				c0 := append([]float32(nil), cc...)
				ok(t, GemmRef(p, ra, rb, cc))
				dev.GemmKind = mode
				ok(t, dev.Gemm(p, ga, gb, gc))
				if mode == GemmCublas {
					checkCublas(t, p, a, b, c0, down(t, gc, len(cc)))
					return
				}
				closeTo(t, "C", down(t, gc, len(cc)), cc, 1e-5*float64(c.k), 1e-4)
			})
		}
	}
	dev.GemmKind = GemmAuto
	// cuBLAS only: shapes its mapping treats specially (K = 0, batch
	// levels that do not collapse into one strided batch, offsets).
	for _, c := range []struct {
		name string
		p    GemmParams
	}{
		{"cublas K=0", GemmParams{M: 5, N: 3, LdA: 1, LdB: 3, LdC: 3, Alpha: 0.7, Beta: 0.5}},
		{"cublas K=0 beta 0", GemmParams{M: 5, N: 3, LdA: 1, LdB: 3, LdC: 3, Alpha: 0.7}},
		{"cublas attn scores", AttnGemm(AttnScores, 5, 4, 7, 9, 64, 0.125)},
		{"cublas attn values grad v", AttnGemm(AttnValuesGradV, 3, 8, 7, 9, 64, 1)},
		{"cublas offsets", GemmParams{TransA: true, M: 19, N: 21, K: 23, Alpha: 1, Beta: 1,
			LdA: 20, LdB: 22, LdC: 24, OffA: 3, OffB: 5, OffC: 7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			skipNoCublas(t)
			la, lb, lc := gemmLens(c.p)
			a, b, cc := randF(1, max(la, 1), 1), randF(2, max(lb, 1), 1), randF(3, lc, 1)
			gc := up(t, cc)
			dev.GemmKind = GemmCublas
			defer func() { dev.GemmKind = GemmAuto }()
			ok(t, dev.Gemm(c.p, up(t, a), up(t, b), gc))
			checkCublas(t, c.p, a, b, cc, down(t, gc, lc))
		})
	}
}

func skipNoCublas(t *testing.T) {
	t.Helper()
	if _, err := LoadCublas(); err != nil {
		t.Skip(err)
	}
}

// checkCublas compares cuBLAS's product got with GemmRef on the unrounded
// operands (c0 is C before the product). cuBLAS's TF32 path may convert
// operands by rounding or by truncation (undocumented), so the rounded
// reference of the WMMA test does not apply; instead each element must lie
// within the TF32 error bound: operand conversion (relative 2^-10 each,
// the truncation worst case, so 2^-9 per product) plus float32 summation
// in any order on both sides ((K+2)·2^-23), all times |Alpha|·Σ|a||b|, and
// 2^-22·|Beta·C|. A mapping bug is an O(1) error and fails it.
func checkCublas(t *testing.T, p GemmParams, a, b, c0, got []float32) {
	t.Helper()
	want := append([]float32(nil), c0...)
	ok(t, GemmRef(p, a, b, want))
	abs := func(x []float32) []float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(math.Abs(float64(v)))
		}
		return y
	}
	q := p
	q.Alpha, q.Beta = 1, 0
	mag := make([]float32, len(c0)) // Σ|a||b| where C is written, else 0
	ok(t, GemmRef(q, abs(a), abs(b), mag))
	rel := 0x1p-9 + float64(p.K+2)*0x1p-23
	var worst float64
	for i := range want {
		if mag[i] == 0 && got[i] == c0[i] && want[i] == c0[i] {
			continue // outside the products, or an exact zero
		}
		tol := rel*math.Abs(float64(p.Alpha))*float64(mag[i]) + 0x1p-22*math.Abs(float64(p.Beta)*float64(c0[i])) + 1e-30
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= tol) {
			t.Fatalf("C[%d] = %g, want %g ± %g", i, got[i], want[i], tol)
		}
		worst = max(worst, d/tol)
	}
	t.Logf("largest error %.3g of the TF32 bound", worst)
}

func TestElementwiseParity(t *testing.T) {
	for _, n := range []int{1, 31, 1000, 3*DropChunk + 7} {
		x, b, dy := randF(4, n, 3), randF(5, n, 3), randF(6, n, 1)
		gx, gb, gdy, gy, gz := up(t, x), up(t, b), up(t, dy), up(t, make([]float32, n)), up(t, make([]float32, n))
		y, z := make([]float32, n), make([]float32, n)
		for op := OpAdd; op <= OpGreaterEq; op++ {
			BinaryRef(op, n, x, 1, b, 0, y)
			ok(t, dev.Binary(op, n, gx, 1, gb, 0, gy))
			same(t, op.String(), down(t, gy, n), y)
		}
		// The kernel evaluates GELU's tanh form in double, the CPU in
		// float32 (vecmath): a few float32 ulp apart.
		GELURef(n, x, y)
		ok(t, dev.GELU(n, gx, gy))
		closeTo(t, "gelu", down(t, gy, n), y, 1e-30, 2e-6)
		GELUGradRef(n, x, dy, y)
		ok(t, dev.GELUGrad(n, gx, gdy, gy))
		closeTo(t, "gelu grad", down(t, gy, n), y, 1e-7, 2e-6)
		// The exact GELU in double on both sides (erf of libm and of the
		// device's math library): within a float32 ulp or two.
		GELUErfRef(n, x, y)
		ok(t, dev.GELUErf(n, gx, gy))
		closeTo(t, "gelu erf", down(t, gy, n), y, 1e-30, 2e-7)
		GELUErfGradRef(n, x, dy, y)
		ok(t, dev.GELUErfGrad(n, gx, gdy, gy))
		closeTo(t, "gelu erf grad", down(t, gy, n), y, 1e-7, 2e-7)
		ReLURef(n, x, y)
		ok(t, dev.ReLU(n, gx, gy))
		same(t, "relu", down(t, gy, n), y)
		ReLUGradRef(n, y, dy, z)
		ok(t, dev.ReLUGrad(n, gy, gdy, gz))
		same(t, "relu grad", down(t, gz, n), z)
		for _, p := range []float32{0, 0.1, 0.5} {
			dp := DropoutParams{P: p, Seed: 7, ID: 3, Step: 12345}
			DropoutRef(n, dp, x, y, z)
			ok(t, dev.Dropout(n, dp, gx, gy, gz))
			same(t, "dropout y", down(t, gy, n), y)
			same(t, "dropout mask", down(t, gz, n), z)
		}
		sq := []float64{0}
		SumSquaresRef(n, x, sq)
		acc, err := dev.AllocBytes(8)
		ok(t, err)
		ok(t, dev.SumSquares(n, gx, acc))
		got := []float64{0}
		ok(t, dev.DownloadFloat64(got, acc))
		if math.Abs(got[0]-sq[0]) > 1e-12*sq[0] {
			t.Fatalf("sum squares %g, want %g", got[0], sq[0])
		}
		// A second call adds to acc (one acc serves every parameter) and,
		// its block sums added in a fixed order, adds the same bits.
		ok(t, dev.SumSquares(n, gx, acc))
		twice := []float64{0}
		ok(t, dev.DownloadFloat64(twice, acc))
		if twice[0] != got[0]+got[0] {
			t.Fatalf("sum squares twice %v, want %v", twice[0], got[0]+got[0])
		}
		ok(t, dev.UploadFloat64(acc, got))
		ClipByNormRef(n, sq, 1, x)
		ok(t, dev.ClipByNorm(n, acc, 1, gx))
		closeTo(t, "clip", down(t, gx, n), x, 0, 1e-6)
		dev.Free(acc)
	}
}

func TestAdamParity(t *testing.T) {
	n := 1001
	p := AdamParams{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, WeightDecay: 0.01}
	w, m, v := randF(7, n, 1), make([]float32, n), make([]float32, n)
	gw, gm, gv := up(t, w), up(t, m), up(t, v)
	for step := 1; step <= 3; step++ {
		g := randF(uint64(8+step), n, 1)
		AdamRef(n, p, 1e-3, step, w, g, m, v)
		ok(t, dev.Adam(n, p, 1e-3, step, gw, up(t, g), gm, gv))
	}
	same(t, "param", down(t, gw, n), w)
	same(t, "m", down(t, gm, n), m)
	same(t, "v", down(t, gv, n), v)
}

func TestRowParity(t *testing.T) {
	for _, c := range []struct{ n, d int }{{1, 1}, {3, 5}, {130, 37}, {64, 1024}} {
		n, d := c.n, c.d
		x, gm, bt, dy := randF(10, n*d, 3), randF(11, d, 1), randF(12, d, 1), randF(13, n*d, 1)
		gx, ggm, gbt, gdy := up(t, x), up(t, gm), up(t, bt), up(t, dy)
		gy, gp := up(t, make([]float32, n*d)), up(t, make([]float32, d))
		y, p := make([]float32, n*d), make([]float32, d)
		LayerNormRef(n, d, LayerNormEps, x, gm, bt, y)
		ok(t, dev.LayerNorm(n, d, LayerNormEps, gx, ggm, gbt, gy))
		closeTo(t, "layernorm", down(t, gy, n*d), y, 1e-6, 1e-5)
		LayerNormGradXRef(n, d, LayerNormEps, x, gm, dy, y)
		ok(t, dev.LayerNormGradX(n, d, LayerNormEps, gx, ggm, gdy, gy))
		closeTo(t, "layernorm dx", down(t, gy, n*d), y, 1e-5, 1e-4)
		LayerNormGradGammaRef(n, d, LayerNormEps, x, dy, p)
		ok(t, dev.LayerNormGradGamma(n, d, LayerNormEps, gx, gdy, gp))
		closeTo(t, "layernorm dgamma", down(t, gp, d), p, 1e-5, 1e-5)
		RMSNormRef(n, d, 1e-6, x, gm, y)
		ok(t, dev.RMSNorm(n, d, 1e-6, gx, ggm, gy))
		closeTo(t, "rmsnorm", down(t, gy, n*d), y, 1e-6, 1e-5)
		RMSNormGradXRef(n, d, 1e-6, x, gm, dy, y)
		ok(t, dev.RMSNormGradX(n, d, 1e-6, gx, ggm, gdy, gy))
		closeTo(t, "rmsnorm dx", down(t, gy, n*d), y, 1e-5, 1e-4)
		RMSNormGradGammaRef(n, d, 1e-6, x, dy, p)
		ok(t, dev.RMSNormGradGamma(n, d, 1e-6, gx, gdy, gp))
		closeTo(t, "rmsnorm dgamma", down(t, gp, d), p, 1e-5, 1e-5)
		SumRowsRef(n, d, dy, p)
		ok(t, dev.SumRows(n, d, gdy, gp))
		same(t, "sum rows", down(t, gp, d), p)
		LogSoftmaxRef(n, d, x, y)
		ok(t, dev.LogSoftmax(n, d, gx, gy))
		closeTo(t, "log-softmax", down(t, gy, n*d), y, 1e-6, 1e-6)
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32((i * 7) % d)
		}
		gids := upInt(t, ids)
		out, gout := make([]int32, n), upInt(t, make([]int32, n))
		ArgmaxRef(n, d, x, 0, Skip{1, -1}, out)
		ok(t, dev.Argmax(n, d, gx, 0, Skip{1, -1}, gout))
		got := make([]int32, n)
		ok(t, dev.DownloadInt32(got, gout))
		for i := range out {
			if got[i] != out[i] {
				t.Fatalf("argmax row %d: %d, want %d", i, got[i], out[i])
			}
		}
		k := min(4, d)
		vals, idx := make([]float32, n*k), make([]int32, n*k)
		TopKRef(n, d, k, x, Skip{0, -1}, vals, idx)
		gv, gi := up(t, make([]float32, n*k)), upInt(t, make([]int32, n*k))
		ok(t, dev.TopK(n, d, k, gx, Skip{0, -1}, gv, gi))
		same(t, "top-k values", down(t, gv, n*k), vals)
		gotIdx := make([]int32, n*k)
		ok(t, dev.DownloadInt32(gotIdx, gi))
		for i := range idx {
			if gotIdx[i] != idx[i] {
				t.Fatalf("top-k ids %v, want %v", gotIdx, idx)
			}
		}
		for _, ce := range []CEParams{{Ignore: -1}, {Ignore: 0, Smoothing: 0.1}} {
			loss, gl := []float32{0}, up(t, []float32{0})
			SoftmaxCERef(n, d, ce, x, ids, loss)
			ok(t, dev.SoftmaxCE(n, d, ce, gx, gids, gl))
			closeTo(t, "ce loss", down(t, gl, 1), loss, 1e-6, 1e-6)
			SoftmaxCEGradRef(n, d, ce, x, ids, []float32{1.5}, y)
			ok(t, dev.SoftmaxCEGrad(n, d, ce, gx, gids, up(t, []float32{1.5}), gy))
			closeTo(t, "ce grad", down(t, gy, n*d), y, 1e-7, 1e-5)
		}
		table := randF(14, d*5, 1)
		gt, ge := up(t, table), up(t, make([]float32, n*5))
		emb := make([]float32, n*5)
		EmbedRef(n, 5, table, ids, emb)
		ok(t, dev.Embed(n, 5, gt, gids, ge))
		same(t, "embed", down(t, ge, n*5), emb)
		dt := make([]float32, d*5)
		EmbedGradRef(d, 5, n, emb, ids, dt)
		ok(t, dev.EmbedGrad(d, 5, n, ge, gids, gt))
		same(t, "embed grad", down(t, gt, d*5), dt)
	}
}

func TestAttentionParity(t *testing.T) {
	for _, c := range []struct {
		s      AttnShape
		mb, bb Bcast
	}{
		{AttnShape{1, 1, 1, 1}, Bcast{1, 1}, Bcast{}},
		{AttnShape{2, 3, 5, 7}, Bcast{2, 1}, Bcast{1, 3}},
		{AttnShape{4, 8, 33, 65}, Bcast{4, 1}, Bcast{1, 8}},
	} {
		s := c.s
		x, dy := randF(20, s.Len(), 4), randF(21, s.Len(), 1)
		mask := make([]float32, c.mb.B*c.mb.H*s.Tq*s.Tk)
		for i := range mask {
			if i%3 == 1 || (i/s.Tk)%4 == 2 {
				mask[i] = float32(math.Inf(-1)) // row 2 mod 4 all masked
			}
		}
		var bias []float32
		var gbias Buf
		if c.bb.B > 0 {
			bias = randF(22, c.bb.B*c.bb.H*s.Tq*s.Tk, 1)
			gbias = up(t, bias)
		}
		y, ds := make([]float32, s.Len()), make([]float32, s.Len())
		gx, gy, gds := up(t, x), up(t, y), up(t, ds)
		AttnSoftmaxRef(s, x, mask, c.mb, bias, c.bb, y)
		ok(t, dev.AttnSoftmax(s, gx, up(t, mask), c.mb, gbias, c.bb, gy))
		closeTo(t, "softmax", down(t, gy, s.Len()), y, 1e-7, 1e-5)
		rows := s.B * s.H * s.Tq
		AttnSoftmaxGradRef(rows, s.Tk, y, dy, ds)
		ok(t, dev.AttnSoftmaxGrad(rows, s.Tk, up(t, y), up(t, dy), gds))
		closeTo(t, "softmax grad", down(t, gds, s.Len()), ds, 1e-6, 1e-5)
		if bias != nil {
			db := make([]float32, len(bias))
			SumToRef(s, c.bb, ds, db)
			gdb := up(t, make([]float32, len(bias)))
			ok(t, dev.SumTo(s, c.bb, up(t, ds), gdb))
			same(t, "sum-to", down(t, gdb, len(db)), db)
		}
		nb := 5
		bk := make([]int32, s.Tq*s.Tk)
		for i := range bk {
			bk[i] = int32(i % nb)
		}
		table := randF(23, nb*s.H, 1)
		rb := make([]float32, s.H*s.Tq*s.Tk)
		grb := up(t, rb)
		RelBiasRef(nb, s.H, s.Tq, s.Tk, table, bk, rb)
		ok(t, dev.RelBias(nb, s.H, s.Tq, s.Tk, up(t, table), upInt(t, bk), grb))
		same(t, "relbias", down(t, grb, len(rb)), rb)
		RelBiasGradRef(nb, s.H, s.Tq, s.Tk, rb, bk, table)
		gtab := up(t, make([]float32, nb*s.H))
		ok(t, dev.RelBiasGrad(nb, s.H, s.Tq, s.Tk, grb, upInt(t, bk), gtab))
		same(t, "relbias grad", down(t, gtab, nb*s.H), table)
	}
}

func TestTransposeParity(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {5, 7}, {33, 65}} {
		x := randF(30, c[0]*c[1], 1)
		y := make([]float32, len(x))
		gy := up(t, y)
		Transpose2DRef(c[0], c[1], x, y)
		ok(t, dev.Transpose2D(c[0], c[1], up(t, x), gy))
		same(t, "transpose", down(t, gy, len(y)), y)
	}
}
