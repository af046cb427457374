package lstm

import (
	"math"
	"strings"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/ops"
)

// The LSTM models have one implementation, the engine program
// (engine_lstm*.go). Its tests: the gradients against finite differences
// of its own loss (TestEngineLSTMGradient), the forward pass against a
// hand computation (TestEngineLSTMForwardByHand), the copy mechanism's
// extended output (TestLSTMExtendedLogProbs), decoding against the
// training pass and cached decoder states against reruns of the prefix
// (TestEngineLSTMLogitsMatchLoss, TestEngineLSTMDecodeCache, and greedy
// and beam decoding in TestLSTMDecodeRerun).

// f32u is float32's unit roundoff, 2⁻²⁴.
const f32u = 0x1p-24

// engineLSTM binds m for evaluation to be, closed when the test ends.
func engineLSTM(t *testing.T, m *Model, be engine.Backend) *Engine {
	t.Helper()
	e, err := NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// cpuEngineLSTM binds m to a leak-checked CPU backend with BLAS.
func cpuEngineLSTM(t *testing.T, m *Model) *Engine {
	t.Helper()
	return engineLSTM(t, m, leakCheckedCPU(t, true))
}

// leakCheckedCPU returns an engine CPU backend that fails the test if any
// buffer it allocated is still allocated when the test ends, after the
// model's Close (a deferred call, or a cleanup registered later).
func leakCheckedCPU(t *testing.T, blas bool) *engine.CPU {
	t.Helper()
	be := &engine.CPU{BLAS: blas}
	t.Cleanup(func() {
		if n := be.Live(); n != 0 {
			t.Errorf("%d engine buffers still allocated after the model was closed", n)
		}
	})
	return be
}

// setWeight uploads w as parameter i of e.
func setWeight(t *testing.T, e *Engine, i int, w []float32) {
	t.Helper()
	if err := e.b.Upload(e.w.Bufs[i], w); err != nil {
		t.Fatal(err)
	}
}

func maxAbs(xs []float32) float64 {
	big := 0.0
	for _, x := range xs {
		big = max(big, math.Abs(float64(x)))
	}
	return big
}

func norm2(xs []float32) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// lstmGradCases are the models of the finite-difference check: both
// variants, both encoders, one and two layers, a copy target whose source
// token occurs twice, and dropout (masks and lstm-copy's word dropout
// fixed by the step). The batch has a row shorter than the longest and an
// all-padding row. blas picks the CPU backend's GEMMs (BLAS or the
// kernels' reference). With the BiLSTM encoder the weights are amplified:
// at initialisation some tensors' gradients are too small for float32
// central differences to see an error in them.
//
// Dropout runs with the BiLSTM encoder only. With dropout, the tiny
// Transformer encoder's LayerNorms see 4-wide rows with entries zeroed,
// whose small variance makes the loss curve fast: its central differences
// reach the analytic derivative only at steps of about 1e-3, where float32
// rounding of the loss swamps the difference.
var lstmGradCases = []struct {
	name, variant string
	layers, tenc  int // LSTM layers; Transformer encoder layers (0: BiLSTM)
	dropout       float64
	repeated      bool
	blas          bool
}{
	{"attention", "lstm-attention", 2, 0, 0, false, false},
	{"attention/1 layer", "lstm-attention", 1, 0, 0, false, true},
	{"copy", "lstm-copy", 2, 0, 0, false, true},
	{"copy/repeated source", "lstm-copy", 2, 0, 0, true, false},
	{"attention/transformer encoder", "lstm-attention", 1, 2, 0, false, true},
	{"copy/transformer encoder/repeated source", "lstm-copy", 2, 1, 0, true, false},
	{"attention/dropout", "lstm-attention", 2, 0, 0.3, false, false},
	{"copy/dropout", "lstm-copy", 2, 0, 0.3, false, true},
}

func lstmGradCase(t *testing.T, i int) (*Model, *models.Batch) {
	t.Helper()
	tc := lstmGradCases[i]
	if tc.tenc > 0 {
		m, bt := tinyTEncLSTM(t, tc.variant, tc.dropout, tc.layers, tc.tenc)
		if tc.repeated {
			bt = repeatedSourceBatch(m)
		}
		return m, bt
	}
	m, bt := tinyLSTMWith(t, tc.variant, tc.dropout, func(c *models.Config) { c.Layers = tc.layers })
	if tc.repeated {
		bt = repeatedSourceBatch(m)
	}
	amplify(m)
	return m, bt
}

// roundingDepth bounds from above the number of float32 roundings on any
// path from a weight to m's loss on bt: per recurrence step a product of
// at most 3H terms, the bias and the gate arithmetic; per Transformer
// encoder layer two LayerNorms, the projections, the attention scores and
// softmax, the feed-forward block and the residuals; then the attention,
// the output layer, the softmax over V, the copy gate and the mean over
// the batch's rows.
func roundingDepth(m *Model, bt *models.Batch) int {
	c, H, W, S, T := m.Cfg, m.Cfg.Dim, m.memW, bt.S, bt.T
	n := 0
	if m.tenc != nil {
		n += c.EncoderLayerCount()*(2*(3*H+8)+4*(H+1)+2*(S+4)+H+2*(c.MLPDim+1)+4) + 3*H + 8
	} else {
		n += c.Layers * S * (3*H + 12)
	}
	n += W + c.Layers*T*(2*H+12) + (H + 2*S + 4) + (H + W + 1) + (c.TgtVocab + 4) + bt.B*bt.T
	if m.Copy {
		n += 2*H + W + S + 4
	}
	return n
}

// TestEngineLSTMGradient checks the engine's gradients of its own loss
// (float32, on the CPU backend) against central differences along
// directions within each parameter tensor: the tensor's gradient and two
// random unit directions.
//
// Derivation of the tolerance. For a unit direction d, let D(h) =
// (L̂(θ+h·d) − L̂(θ−h·d))/2h with L̂ the loss as computed, and A(h) the
// analytic derivative ĝ·(Δ₊ + Δ₋)/2h, where Δ± are the steps actually
// taken once θ ± h·d is rounded to float32 (so rounding the weights costs
// nothing). By Taylor's theorem
//
//	E(h) = D(h) − A(h) = −δ·d + c₃h² + c₅h⁴ + O(h⁶) + r(h)
//
// with δ the analytic gradient's error (what the check looks for), c₃ and
// c₅ the loss's third and fifth directional derivatives over 3! and 5!,
// and r(h) the rounding of the two loss evaluations: |r(h)| ≤ ρ/h when
// each is within ρ of the exact loss. The differences of E at h, 2h and
// 4h measure c₃ and c₅, free of δ:
//
//	Δ₁ = E(2h) − E(h) = 3c₃h² + 15c₅h⁴,  Δ₂ = E(4h) − E(2h) = 12c₃h² + 240c₅h⁴,
//
// so c₅h⁴ = (Δ₂ − 4Δ₁)/180 and c₃h² = (Δ₁ − 15c₅h⁴)/3 up to rounding,
// and Richardson's extrapolation
//
//	X = E(h) − Δ₁/3 + (Δ₂ − 4Δ₁)/45 = −δ·d + r₁·(−64/45) + r₂·(4/9) + r₄·(−1/45) + O(h⁶)
//
// removes both terms. With r_k the rounding at step k·h, |r_k| ≤ ρ/kh, so
// |X + δ·d| ≤ (64/45 + 2/9 + 1/180)·ρ/h ≤ 1.65ρ/h, up to the O(h⁶)
// remainder. The check fails when |X| exceeds 1.65ρ/h + γ‖ĝ‖, the last
// term the analytic gradient's own rounding (|ĝ·d − g·d| ≤ γ‖ĝ‖ for
// unit d).
//
// ρ and γ follow Higham and Mary's probabilistic rounding error bound
// (SIAM J. Sci. Comput. 41, 2019): a result of n float32 roundings is
// within γ = λ·√n·u relative of the exact one, with u = 2⁻²⁴, except with
// probability at most 2n·exp(−λ²/2); λ = 8 makes that below 1e-10 for
// these n. n is roundingDepth, and ρ = γ·(1 + |L|): the tiny models'
// activations pass through σ, tanh, softmax and LayerNorm and stay of
// order one, so the loss's intermediate sums are of order 1 + |L|.
//
// The step h must be small against the scale on which the loss curves,
// so that the O(h⁶) remainder is small against the terms removed, and
// large enough for ρ/h to stay small. amplify scales the weights by 4,
// and with them the loss's k-th derivatives by up to 4^k; h =
// (3ρ/4³)^(1/3) (about 0.01 here) is the step that minimises ρ/h +
// |c₃|·h² for third derivatives up to 4³.
//
// The check sees a wrong gradient only where the tolerance is small
// against it. Along ĝ the derivative is ‖ĝ‖, and every tensor must be
// resolved there, with a tolerance below half of ‖ĝ‖, in at least one
// case: the check then sees a sign error, a factor of two or a dropped
// path that carries half the gradient in every tensor. The Transformer
// encoder's key biases (.self.bk) are exempt: their gradient is zero in
// exact arithmetic, as softmax ignores a shift shared by a query's
// scores, so the check only bounds it.
func TestEngineLSTMGradient(t *testing.T) {
	resolved := map[string]float64{} // tensor name -> smallest tolerance/‖ĝ‖ along ĝ
	for i, tc := range lstmGradCases {
		t.Run(tc.name, func(t *testing.T) {
			m, bt := lstmGradCase(t, i)
			e := engineLSTM(t, m, leakCheckedCPU(t, tc.blas))
			const eps, step, lambda = 0.1, 3, 8.0
			train := tc.dropout > 0 // the masks of step; without dropout the plain loss
			L, err := e.Loss(bt, true, eps, step)
			if err != nil {
				t.Fatal(err)
			}
			p := m.Params()
			grads := make([][]float32, len(p.Grads))
			theta := make([][]float32, len(p.Names))
			for k := range grads {
				grads[k] = append([]float32(nil), p.Grads[k]...)
				theta[k] = append([]float32(nil), p.Data(k)...)
			}
			gamma := lambda * math.Sqrt(float64(roundingDepth(m, bt))) * f32u
			rho := gamma * (1 + math.Abs(L))
			h := math.Cbrt(3 * rho / 64)
			// errAt returns E(s) along dir in tensor k, and A(s).
			errAt := func(k int, dir []float64, s float64) (float64, float64) {
				var ls [2]float64
				ana := 0.0
				w := make([]float32, len(dir))
				for side, sign := range []float64{1, -1} {
					for j, d := range dir {
						w[j] = float32(float64(theta[k][j]) + sign*s*d)
						ana += float64(grads[k][j]) * sign * (float64(w[j]) - float64(theta[k][j]))
					}
					setWeight(t, e, k, w)
					l, err := e.Loss(bt, train, eps, step)
					if err != nil {
						t.Fatal(err)
					}
					ls[side] = l
				}
				setWeight(t, e, k, theta[k])
				ana /= 2 * s
				return (ls[0]-ls[1])/(2*s) - ana, ana
			}
			rng := data.NewRand(uint64(17 + i))
			for k, name := range p.Names {
				gn := norm2(grads[k])
				zero := strings.HasSuffix(name, ".self.bk")
				for r := 0; r < 3; r++ {
					dir := make([]float64, len(grads[k]))
					for j := range dir {
						if r == 0 && gn > 0 {
							dir[j] = float64(grads[k][j]) / gn
						} else {
							dir[j] = rng.NormFloat64()
						}
					}
					if r > 0 || gn == 0 {
						var s float64
						for _, d := range dir {
							s += d * d
						}
						for j := range dir {
							dir[j] /= math.Sqrt(s)
						}
					}
					e1, a1 := errAt(k, dir, h)
					e2, _ := errAt(k, dir, 2*h)
					e4, _ := errAt(k, dir, 4*h)
					d1, d2 := e2-e1, e4-e2
					x := e1 - d1/3 + (d2-4*d1)/45
					tol := 1.65*rho/h + gamma*gn
					if math.Abs(x) > tol {
						t.Errorf("%s, direction %d: analytic %.6g, extrapolated central difference %.6g (tolerance %.2g)", name, r, a1, a1+x, tol)
					}
					if r == 0 && !zero {
						if q, ok := resolved[name]; !ok || tol/gn < q {
							resolved[name] = tol / gn
						}
					}
				}
			}
		})
	}
	for name, q := range resolved {
		if q > 0.5 {
			t.Errorf("%s: tolerance at best %.2g of the gradient's norm: too large for the check to see an error", name, q)
		}
	}
}

// TestEngineLSTMForwardByHand pins the forward pass on a model of one
// unit (Dim 1, one layer) with set weights: the loss and memory of a
// two-token source and a one-token target, computed here in float64 from
// the equations in lstm.go. Tolerance: about 60 float32 operations lead
// to the loss, each intermediate of order one, so the engine is within
// γ₆₀ = 60u/(1−60u) ≈ 4e-6 relative of the exact value (Higham's
// worst-case bound); 1e-5 of 1 + |value| covers it.
func TestEngineLSTMForwardByHand(t *testing.T) {
	m, _ := tinyLSTMWith(t, "lstm-attention", 0, func(c *models.Config) { c.Dim, c.Layers = 1, 1 })
	p := m.Params()
	for i := range p.Names {
		for j := range p.Data(i) {
			p.Data(i)[j] = float32((i*7+j*3)%11-5) / 8 // in [-5/8, 5/8]
		}
	}
	ex := models.Example{Src: []int{4, 6}, Tgt: []int{5}}
	bt := models.MakeBatch([]*models.Example{&ex}, 1, 1)
	w := func(name string) []float64 {
		i, ok := p.Index(name)
		if !ok {
			t.Fatalf("no tensor %s", name)
		}
		out := make([]float64, len(p.Data(i)))
		for j, v := range p.Data(i) {
			out[j] = float64(v)
		}
		return out
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// cell is one step of a one-unit cell: W [2, 4] (x row, h row), gates
	// i, f, g, o.
	cell := func(name string, x, h, c float64) (float64, float64) {
		W, b := w(name+".w"), w(name+".b")
		z := func(k int) float64 { return x*W[k] + h*W[4+k] + b[k] }
		c = sig(z(1))*c + sig(z(0))*math.Tanh(z(2))
		return sig(z(3)) * math.Tanh(c), c
	}
	src, tgt := w("src_emb"), w("tgt_emb")
	x := []float64{src[4], src[6]}
	hf0, cf0 := cell("enc0.fwd", x[0], 0, 0)
	hf1, _ := cell("enc0.fwd", x[1], hf0, cf0)
	hb1, cb1 := cell("enc0.bwd", x[1], 0, 0)
	hb0, _ := cell("enc0.bwd", x[0], hb1, cb1)
	mem := [][2]float64{{hf0, hb0}, {hf1, hb1}}
	d, _ := cell("dec0", tgt[models.StartID], 0, 0)
	wq, wk, ba, va := w("attn.wq")[0], w("attn.wk"), w("attn.b")[0], w("attn.v")[0]
	var e [2]float64
	for j, mj := range mem {
		e[j] = va * math.Tanh(wq*d+ba+wk[0]*mj[0]+wk[1]*mj[1])
	}
	a0 := 1 / (1 + math.Exp(e[1]-e[0]))
	o := []float64{d, a0*mem[0][0] + (1-a0)*mem[1][0], a0*mem[0][1] + (1-a0)*mem[1][1]}
	V := m.Cfg.TgtVocab
	outW, outB := w("out.w"), w("out.b")
	logits := make([]float64, V)
	for k := range logits {
		logits[k] = outB[k]
		for i, oi := range o {
			logits[k] += oi * outW[i*V+k]
		}
	}
	var z float64
	for _, l := range logits {
		z += math.Exp(l)
	}
	lse := math.Log(z)
	const tol = 1e-5
	e2 := engineLSTM(t, m, leakCheckedCPU(t, false))
	for _, eps := range []float64{0, 0.1} {
		want := (1 - eps) * (lse - logits[5])
		for _, l := range logits {
			want += eps / float64(V) * (lse - l)
		}
		got, err := e2.Loss(bt, false, eps, 0)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > tol*(1+math.Abs(want)) {
			t.Errorf("smoothing %g: loss %.7f, by hand %.7f", eps, got, want)
		}
	}
	got, err := e2.Encode(bt.Src, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for j, mj := range mem {
		for k, v := range mj {
			if g := float64(got.Data[j*2+k]); math.Abs(g-v) > tol*(1+math.Abs(v)) {
				t.Errorf("memory [%d, %d]: %.7f, by hand %.7f", j, k, g, v)
			}
		}
	}
}

// TestLSTMExtendedLogProbs pins lstm-copy's output over the extended
// vocabulary (target ids, then source positions) on set inputs: a source
// token that is a target token adds its copy mass to that target id, a
// repeated source token collects its positions' mass at the first of
// them, <unk> positions keep their own entries, and merged positions and
// positions beyond a row's source get -1e30. The values are sums of a few
// float32 terms of order one, within a few u of the float64 ones here.
func TestLSTMExtendedLogProbs(t *testing.T) {
	m, _ := tinyLSTM(t, "lstm-copy", 0) // source a b c x = 4 5 6 7, target a b y = 4 5 6
	V, S := m.Cfg.TgtVocab, 6
	src := []int{4, 7, 6, 7, models.UnkID, models.UnkID, 5, 7, models.PadID, models.PadID, models.PadID, models.PadID}
	srcLen := []int{6, 2}
	logits := []float32{0, 0.5, -1, 0.25, 1, -0.5, 2, 1, 0, 0, 0, 0, 0, 0}
	pgen := []float32{0.7, 0.25}
	att := []float32{0.1, 0.2, 0.15, 0.3, 0.05, 0.2, 0.6, 0.4, 0, 0, 0, 0}
	got := m.extendedLogProbs(logits, pgen, att, src, srcLen, S)
	for b := range srcLen {
		want := make([]float64, V+S)
		var z float64
		for k := 0; k < V; k++ {
			z += math.Exp(float64(logits[b*V+k]))
		}
		for k := 0; k < V; k++ {
			want[k] = float64(pgen[b]) * math.Exp(float64(logits[b*V+k])) / z
		}
		mass := func(j int) float64 { return float64(1-pgen[b]) * float64(att[b*S+j]) }
		if b == 0 {
			want[4] += mass(0)                      // a is target id 4
			want[V+1] = mass(1) + mass(3)           // x at 1 and 3
			want[V+2] = mass(2)                     // c, source only
			want[V+4], want[V+5] = mass(4), mass(5) // two <unk>
		} else {
			want[5] += mass(0) // b is target id 5
			want[V+1] = mass(1)
		}
		for k, w := range want {
			g := got[b*(V+S)+k]
			if w == 0 {
				if g != -1e30 {
					t.Errorf("row %d, id %d: %v, want -1e30 (impossible)", b, k, g)
				}
				continue
			}
			if lw := math.Log(w); math.Abs(float64(g)-lw) > 1e-6*(1+math.Abs(lw)) {
				t.Errorf("row %d, id %d: log P %.7f, want %.7f", b, k, g, lw)
			}
		}
	}
}

// lossCases are the models of the decoding tests.
var lossCases = []string{"lstm-attention", "lstm-copy", "lstm-copy/transformer", "lstm-copy/repeated source"}

func lossCase(t *testing.T, name string) (*Model, *models.Batch) {
	t.Helper()
	if v, ok := strings.CutSuffix(name, "/transformer"); ok {
		return tinyTEncLSTM(t, v, 0, 2, 2)
	}
	if v, ok := strings.CutSuffix(name, "/repeated source"); ok {
		m, _ := tinyLSTM(t, v, 0)
		return m, repeatedSourceBatch(m)
	}
	return tinyLSTM(t, name, 0)
}

// TestEngineLSTMLogitsMatchLoss checks that the decoding path (Encode,
// Logits) computes the training path's distribution, and the training
// loss's label smoothing: (1-eps) on the target and eps spread over the V
// target ids for lstm-attention, none for lstm-copy. On the reference
// backend both paths compute each logit as the same sum in the same
// order; they differ in the softmax and the mean over the n target rows:
// up to V + n + 8 float32 roundings on terms of order 1 + |L|, so
// within 2·(V + n + 8)·u·(1 + |L|) of each other (worst case).
func TestEngineLSTMLogitsMatchLoss(t *testing.T) {
	for _, name := range lossCases {
		t.Run(name, func(t *testing.T) {
			m, bt := lossCase(t, name)
			e := engineLSTM(t, m, leakCheckedCPU(t, false))
			nll, uniform, n := teacherForcedLosses(t, e, bt, !m.Copy) // lstm-copy's rows hold impossible ids
			for _, eps := range []float64{0, 0.1} {
				got := nll / float64(n)
				if !m.Copy {
					got = ((1-eps)*nll + eps*uniform) / float64(n)
				}
				want, err := e.Loss(bt, false, eps, 0)
				if err != nil {
					t.Fatal(err)
				}
				tol := 2 * float64(m.Cfg.TgtVocab+n+8) * f32u * (1 + math.Abs(want))
				if math.Abs(got-want) > tol {
					t.Errorf("smoothing %g: decoding loss %.7f, training loss %.7f (tolerance %.2g)", eps, got, want, tol)
				}
			}
		})
	}
}

// TestEngineLSTMDecodeCache: Logits from the cached decoder states (rows
// swapped, as beam search does) equal a rerun over the whole prefix, and
// a memory the engine did not encode (uploaded) decodes as the encoded
// one. On the reference backend both compute the same sums in the same
// order, so they agree bit for bit.
func TestEngineLSTMDecodeCache(t *testing.T) {
	for _, name := range lossCases {
		t.Run(name, func(t *testing.T) {
			m, bt := lossCase(t, name)
			e := engineLSTM(t, m, leakCheckedCPU(t, false))
			one, err := e.Encode(bt.Src[:bt.S], 1, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			mem := one.Repeat(2) // a memory the engine did not encode: uploaded
			const T = 4
			seqs := [][]int{
				{models.StartID, 4, 0, 0, models.StartID, 5, 0, 0},
				{models.StartID, 4, 0, 0, models.StartID, 5, 0, 0},
				{models.StartID, 5, 6, 0, models.StartID, 4, 4, 0}, // rows swapped, one token more: cached step
				{models.StartID, 6, 6, 5, models.StartID, 4, 4, 4}, // a prefix never decoded: rerun
			}
			got := make([][]float32, len(seqs))
			for pos, in := range seqs {
				if _, cached := e.fromRows(in, T, pos); cached != (pos == 1 || pos == 2) {
					t.Fatalf("pos %d: cached states used %v", pos, cached)
				}
				if got[pos], err = e.Logits(mem, in, T, pos); err != nil {
					t.Fatal(err)
				}
			}
			for pos, in := range seqs {
				fresh := *mem // another address: uploaded again, the prefix rerun
				want, err := e.Logits(&fresh, in, T, pos)
				if err != nil {
					t.Fatal(err)
				}
				if len(got[pos]) != len(want) {
					t.Fatalf("pos %d: %d logits, rerun %d", pos, len(got[pos]), len(want))
				}
				for j := range want {
					if got[pos][j] != want[j] {
						t.Fatalf("pos %d logit %d: %v, rerun %v", pos, j, got[pos][j], want[j])
					}
				}
			}
		})
	}
}

// TestEngineLSTMStep: Step's loss and gradient norm are the training
// pass's, and the Adam update moves every weight with a gradient. Step
// and Loss run the same kernels; the norm is summed on the backend in
// float32 over N gradient entries and here in float64, within N·u
// relative of each other (worst case).
func TestEngineLSTMStep(t *testing.T) {
	m, bt := tinyLSTM(t, "lstm-copy", 0.3)
	e := cpuEngineLSTM(t, m)
	want, err := e.Loss(bt, true, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var sq float64
	N := 0
	for _, g := range m.Params().Grads {
		for _, v := range g {
			sq += float64(v) * float64(v)
		}
		N += len(g)
	}
	p := m.Params()
	before := make([][]float32, len(p.Names))
	for i := range before {
		before[i] = append([]float32(nil), p.Data(i)...)
	}
	tr, err := NewTrainer(m, leakCheckedCPU(t, true), ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	loss, norm, err := tr.Step(bt, 0, 3, 0, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if loss != want || math.Abs(norm-math.Sqrt(sq)) > float64(N)*f32u*math.Sqrt(sq) {
		t.Fatalf("step: loss %v norm %v, training pass %v and %v", loss, norm, want, math.Sqrt(sq))
	}
	if err := tr.Download(); err != nil {
		t.Fatal(err)
	}
	for i, n := range p.Names {
		moved := 0.0
		for j, w := range p.Data(i) {
			moved = max(moved, math.Abs(float64(w-before[i][j])))
		}
		if moved == 0 && maxAbs(p.Grads[i]) > 0 {
			t.Errorf("%s did not move", n)
		}
	}
}

// TestEngineLSTMDropoutMatters: with dropout the training loss depends on
// the step's masks.
func TestEngineLSTMDropoutMatters(t *testing.T) {
	m, bt := tinyLSTM(t, "lstm-attention", 0.3)
	e := cpuEngineLSTM(t, m)
	a, err := e.Loss(bt, true, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Loss(bt, true, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("steps 1 and 2 gave the same loss %v: the masks do not follow the step", a)
	}
}

// TestEngineLSTMNoTargets: a batch whose targets are all padding has loss
// 0 and zero gradients (no stale gradients of an earlier batch, no panic).
func TestEngineLSTMNoTargets(t *testing.T) {
	m, bt := tinyLSTM(t, "lstm-copy", 0.3)
	e := cpuEngineLSTM(t, m)
	if _, err := e.Loss(bt, true, 0, 1); err != nil { // leaves non-zero gradients
		t.Fatal(err)
	}
	empty := *bt
	empty.Tgt = make([]int, len(bt.Tgt))
	l, err := e.Loss(&empty, true, 0, 2)
	if err != nil || l != 0 {
		t.Fatalf("loss %v, %v; want 0", l, err)
	}
	for i, g := range m.Params().Grads {
		if maxAbs(g) != 0 {
			t.Fatalf("%s has non-zero gradients", m.Params().Names[i])
		}
	}
}
