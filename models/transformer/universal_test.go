package transformer

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/models"
)

// actReference is tensor2tensor's ACT loop (universal_transformer_act,
// act_type "basic") in float64 over n positions of width d, with the
// halting logit of a state its first component and layer(t, x) adding
// (t+1)·shift to every component: it returns the stack's output and each
// position's ponder time (steps plus remainder).
func actReference(x0 [][]float64, steps int, shift float64) ([][]float64, []float64) {
	n, d := len(x0), len(x0[0])
	hp, rem, nup := make([]float64, n), make([]float64, n), make([]float64, n)
	state := make([][]float64, n)
	prev := make([][]float64, n)
	for i := range state {
		state[i] = append([]float64(nil), x0[i]...)
		prev[i] = make([]float64, d)
	}
	thr := 1 - actEpsilon
	for t := 0; t < steps; t++ {
		// tensor2tensor stops when no position runs on; more steps
		// change nothing then, which is what the graph relies on.
		for i := 0; i < n; i++ {
			p := 1 / (1 + math.Exp(-state[i][0]))
			run := 0.0
			if hp[i] < 1 {
				run = 1
			}
			halted, keep := 0.0, 0.0
			if hp[i]+p*run > thr {
				halted = run
			} else {
				keep = run
			}
			hp[i] += p * keep
			rem[i] += halted * (1 - hp[i])
			hp[i] += halted * rem[i]
			nup[i] += keep + halted
			u := p*keep + halted*rem[i]
			for j := range state[i] {
				state[i][j] += float64(t+1) * shift
				prev[i][j] = state[i][j]*u + prev[i][j]*(1-u)
			}
		}
	}
	ponder := make([]float64, n)
	for i := range ponder {
		ponder[i] = nup[i] + rem[i]
	}
	return prev, ponder
}

// TestACTMatchesReference runs the graph's ACT recurrence (a halting unit
// reading the first component, zero step embeddings, a layer that adds a
// constant) over positions that halt at different steps, and one that
// never halts within the steps, against actReference.
func TestACTMatchesReference(t *testing.T) {
	const steps, shift = 4, 0.5
	x0 := [][]float64{{-6, 1}, {-1, 0}, {0.2, -1}, {2, 3}, {5, 0}}
	n, d := len(x0), len(x0[0])
	cfg := models.DefaultConfig()
	if err := cfg.ApplyVariant(models.Universal); err != nil {
		t.Fatal(err)
	}
	cfg.UTSteps, cfg.ACT, cfg.Dim, cfg.Heads, cfg.MLPDim, cfg.SrcVocab, cfg.TgtVocab = steps, true, d, 1, 4, 4, 4
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := m.Params()
	for _, id := range m.encStep {
		clear(p.Data(id))
	}
	copy(p.Data(m.encHalt[0]), []float32{1, 0}) // logit = state[0]
	p.Data(m.encHalt[1])[0] = 0
	b := m.newBuilder(false)
	flat := make([]float32, 0, n*d)
	for _, row := range x0 {
		for _, v := range row {
			flat = append(flat, float32(v))
		}
	}
	x := b.constant("x0", flat, n, d) // [N, D]
	layer := func(t int, x *G.Node) *G.Node {
		c := G.NewConstant(float32(float64(t+1) * shift))
		return b.must(G.Add(x, c)) // [N, D]
	}
	out := b.recurrence(x, nil, m.encStep, m.encHalt, layer) // [N, D]
	if b.err != nil {
		t.Fatal(b.err)
	}
	vm := G.NewTapeMachine(b.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	want, ponder := actReference(x0, steps, shift)
	got := out.Value().(*tensor.Dense).Float32s()
	gotPonder := b.ponder[0].Value().(*tensor.Dense).Float32s()
	// float32 arithmetic over a few steps of values below 20.
	const tol = 1e-5
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if g, w := float64(got[i*d+j]), want[i][j]; math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
				t.Errorf("position %d, component %d: %v, reference %v", i, j, g, w)
			}
		}
		if g, w := float64(gotPonder[i]), ponder[i]; math.Abs(g-w) > tol*math.Max(1, w) {
			t.Errorf("position %d: ponder time %v, reference %v", i, g, w)
		}
	}
	// The positions halt at different steps, the first never does, and
	// the last halts in its first step with the remainder 1.
	if ponder[0] != steps || ponder[len(ponder)-1] != 2 {
		t.Errorf("ponder times %v: want the first at the step limit %d and the last 1 step + remainder 1", ponder, steps)
	}
}
