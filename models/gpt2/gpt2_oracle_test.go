package gpt2

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"compbench/engine"
)

// The engine is checked against Gorgonia's TapeMachine running the same
// graph (gpt2_graph.go): the oracle, run only by tests.

// u32 is float32's unit roundoff, 2^-24.
const u32 = 0x1p-24

// gamma is γ_n = n·u/(1−n·u), the bound on the relative error of an
// n-term float32 dot product in any summation order (Higham, Accuracy and
// Stability of Numerical Algorithms, §3.1).
func gamma(n int) float64 { return float64(n) * u32 / (1 - float64(n)*u32) }

// expSumTol is the relative error of vecmath.ExpSum's Σ e^(x−max) given its
// float32 arguments x−max, as vecmath's TestExpSum checks it.
const expSumTol = 1e-6

// tapeRun runs g on the TapeMachine with the inputs set by fill (and
// setTargets); the nodes keep their values.
func tapeRun(t *testing.T, g *gpt2Graph) {
	t.Helper()
	for n, v := range g.vals {
		if err := G.Let(n, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := G.NewTapeMachine(g.hidden.Graph()).RunAll(); err != nil {
		t.Fatal(err)
	}
}

// oracleLogProbs computes the scored tokens' log softmax(h·wteᵀ)[target]
// in float64 from the hidden states hidden [B*T, E], and for each a bound
// on the error of the engine's float32 computation from the same hidden
// states:
//
//   - the float32 logits: |ẑ_v − z_v| <= δ_v = γ_E Σ_k |h_k w_vk|, and a
//     log-probability moves by at most twice the largest |ẑ_v − z_v|
//     (z_t − log Σ e^z is 1-Lipschitz in z_t and in the max norm of z);
//   - ẑ_t − max rounded to float32: u |z_t − max|;
//   - Σ e^(a_v), a_v = z_v − max: the arguments rounded to float32 change
//     each term by a relative u |a_v|, and ExpSum adds expSumTol; a
//     relative error r of the sum moves its log by at most r/(1−r).
//
// The float64 arithmetic here adds terms below 2^-40 of the ones above.
func oracleLogProbs(m *Model, hidden []float32, seqs [][]int, first []int, T int) (want, bound [][]float64) {
	E, V := m.Cfg.NEmbd, m.Cfg.VocabSize
	wte := m.weights("wte.weight")
	z, abs := make([]float64, V), make([]float64, V)
	for i, s := range seqs {
		want, bound = append(want, nil), append(bound, nil)
		pad := T - len(s)
		for t := first[i]; t < len(s); t++ {
			h := hidden[(i*T+pad+t-1)*E:][:E]
			mx, delta := math.Inf(-1), 0.0
			for v := 0; v < V; v++ {
				z[v], abs[v] = 0, 0
				for k, x := range h {
					z[v] += float64(x) * float64(wte[v*E+k])
					abs[v] += math.Abs(float64(x) * float64(wte[v*E+k]))
				}
				mx, delta = max(mx, z[v]), max(delta, gamma(E)*abs[v])
			}
			var sum, arg float64
			for v := 0; v < V; v++ {
				e := math.Exp(z[v] - mx)
				sum += e
				arg += u32 * math.Abs(z[v]-mx) * e
			}
			r := expSumTol + arg/sum
			lp := z[s[t]] - mx - math.Log(sum)
			want[i] = append(want[i], lp)
			bound[i] = append(bound[i], 2*delta+u32*math.Abs(z[s[t]]-mx)+r/(1-r)+0x1p-40*(1+math.Abs(lp)))
		}
	}
	return want, bound
}

// checkScores scores seqs on e and checks the result against the oracle:
// the hidden states bit for bit (the CPU backend's BLAS products are the
// TapeMachine's calls), the log-probabilities within oracleLogProbs'
// bounds.
func checkScores(t *testing.T, m *Model, e *Engine, seqs [][]int, first []int, batch int) {
	t.Helper()
	got, err := e.TokenLogProbs(seqs, first, batch)
	if err != nil {
		t.Fatal(err)
	}
	T, _ := m.checkBatch(seqs, first)
	k := gpt2Key{b: batch, t: T}
	g, err := m.graph(k)
	if err != nil {
		t.Fatal(err)
	}
	g.fill(seqs, m.Cfg.VocabSize-1)
	tapeRun(t, g)
	tape := g.hidden.Value().Data().([]float32)
	p := e.progs[k]
	hb, err := p.mc.Buffer(p.g.hidden)
	if err != nil {
		t.Fatal(err)
	}
	hidden := make([]float32, len(tape))
	if err := e.b.Download(hidden, hb); err != nil {
		t.Fatal(err)
	}
	for i := range tape {
		if math.Float32bits(hidden[i]) != math.Float32bits(tape[i]) {
			t.Fatalf("hidden state %d: engine %v, TapeMachine %v", i, hidden[i], tape[i])
		}
	}
	want, bound := oracleLogProbs(m, tape, seqs, first, T)
	var worst float64 // largest error as a fraction of its bound
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("sequence %d: %d log-probs, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			d := math.Abs(got[i][j] - want[i][j])
			if d > bound[i][j] {
				t.Errorf("sequence %d token %d: engine %.9g, oracle %.9g, bound %.3g", i, j, got[i][j], want[i][j], bound[i][j])
			}
			worst = max(worst, d/bound[i][j])
		}
	}
	t.Logf("log-probs within %.2g of their bounds", worst)
}

// TestGPT2EngineMatchesTapeMachine: token log-probabilities on the
// engine's CPU backend against the oracle, for the fixture (GPT-2's
// vocabulary) and a small random model: one sequence, left-padded batches
// with spare rows, scoring from later tokens, and a reused program.
func TestGPT2EngineMatchesTapeMachine(t *testing.T) {
	fixture, err := Load(gpt2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	small, err := New(Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}, 9)
	if err != nil {
		t.Fatal(err)
	}
	exp := loadExpected(t)
	var cases [][]int
	for _, c := range exp.Cases {
		cases = append(cases, c.IDs)
	}
	t.Run("fixture", func(t *testing.T) {
		e := scorer(t, fixture)
		checkScores(t, fixture, e, cases[:1], []int{1}, 1)
		checkScores(t, fixture, e, cases, []int{1, 2, 3, 1, 4}, len(cases)+3)
	})
	t.Run("small", func(t *testing.T) {
		e := scorer(t, small)
		seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}, {7, 8}, {29, 3, 4, 5, 6, 7, 8, 9, 10, 11, 29}}
		first := []int{1, 2, 1, 5}
		for rep := 0; rep < 2; rep++ {
			checkScores(t, small, e, seqs, first, 4)
			checkScores(t, small, e, seqs[:3], first[:3], 5)
		}
	})
}

// TestGPT2ScoringHoldsOneBlock: scoring is block-at-a-time in memory. The
// arena of the scoring program reuses each block's activations for the
// next, so a 6-layer model's arena is the 2-layer one's, while the sum of
// its activations grows with the layers.
func TestGPT2ScoringHoldsOneBlock(t *testing.T) {
	arena := func(layers int) (int, int) {
		m, err := New(Config{NLayer: layers, NHead: 2, NEmbd: 32, NPositions: 32, VocabSize: 50, LayerNormEpsilon: 1e-5}, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.graph(gpt2Key{b: 4, t: 16})
		if err != nil {
			t.Fatal(err)
		}
		p, err := engine.Compile(G.Nodes{g.hidden}, engine.Options{Inputs: g.inputs()})
		if err != nil {
			t.Fatal(err)
		}
		return p.ArenaSize, p.ActivationTotal()
	}
	a2, t2 := arena(2)
	a6, t6 := arena(6)
	if a6 != a2 || !(t6 > 2*t2) {
		t.Errorf("arena %d floats with 6 layers, %d with 2 (activations %d and %d)", a6, a2, t6, t2)
	}
}
