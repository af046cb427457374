package gpt2

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"compbench/engine"
	"compbench/ops"
)

// gpt2Batch makes n left-padded-to-be sequences of lengths 3..maxLen over
// vocab v (the last id is end-of-text), scored from position 1 or 2.
func gpt2Batch(n, maxLen, v, salt int) ([][]int, []int) {
	var seqs [][]int
	var first []int
	for i := 0; i < n; i++ {
		l := 3 + (i*7+salt)%(maxLen-2)
		s := []int{v - 1}
		for t := 1; t < l-1; t++ {
			s = append(s, (i*13+t*5+salt)%(v-1))
		}
		seqs = append(seqs, append(s, v-1))
		first = append(first, 1+(i+salt)%2)
	}
	return seqs, first
}

// hostWeights copies m's host weights.
func hostWeights(m *Model) [][]float32 {
	out := make([][]float32, len(m.p.Names))
	for i := range m.p.Names {
		out[i] = slices.Clone(m.p.Data(i))
	}
	return out
}

// equalWeights reports the first tensor where a and b differ in any bit.
func equalWeights(m *Model, a, b [][]float32) (string, bool) {
	for i := range a {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return m.p.Names[i], false
			}
		}
	}
	return "", true
}

// oracleTrainer is the host fine-tuning the engine is checked against: the
// training graph on the TapeMachine, then ops.AdamStep on every weight.
type oracleTrainer struct {
	m    *Model
	mom  [2][]*tensor.Dense
	step int
}

func newOracleTrainer(m *Model) *oracleTrainer {
	o := &oracleTrainer{m: m}
	for k := range o.mom {
		for _, v := range m.p.Values {
			o.mom[k] = append(o.mom[k], tensor.New(tensor.WithShape(v.Shape()...), tensor.WithBacking(make([]float32, v.Shape().TotalSize()))))
		}
	}
	return o
}

func (o *oracleTrainer) trainStep(t *testing.T, seqs [][]int, first []int, lr float32) float64 {
	t.Helper()
	T, err := o.m.checkBatch(seqs, first)
	if err != nil {
		t.Fatal(err)
	}
	g, err := o.m.graph(gpt2Key{b: len(seqs), t: T, train: true})
	if err != nil {
		t.Fatal(err)
	}
	g.fill(seqs, o.m.Cfg.VocabSize-1)
	g.setTargets(seqs, first)
	tapeRun(t, g)
	loss := float64(g.loss.Value().Data().(float32))
	o.step++
	for k, gn := range g.grads {
		i := g.params[k]
		if err := ops.AdamStep(o.m.p.Values[i], gn.Value().(*tensor.Dense), o.mom[0][i], o.mom[1][i], lr, o.step, AdamW()); err != nil {
			t.Fatal(err)
		}
	}
	return loss
}

// TestGPT2TrainerMatchesTapeMachine: three AdamW steps on the engine's CPU
// backend (two batch widths, so two programs) give the oracle's losses
// and weights bit for bit: the BLAS products are the TapeMachine's calls
// and the Adam kernel is ops.AdamStep's arithmetic. (Above 64 rows the
// bias gradients' chunked row sums round differently: docs/engine.md.)
func TestGPT2TrainerMatchesTapeMachine(t *testing.T) {
	cfg := Config{NLayer: 2, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	for _, rows := range []int{2, 4} { // at most 4 x 16 = 64 token rows
		host, err := New(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		dev, _ := New(cfg, 5)
		oracle := newOracleTrainer(host)
		tr, err := NewTrainer(dev, leakCheckedCPU(t, true), AdamW())
		if err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 3; step++ {
			seqs, first := gpt2Batch(rows, []int{16, 7, 16}[step], cfg.VocabSize, step)
			want := oracle.trainStep(t, seqs, first, 1e-2)
			got, err := tr.TrainStep(seqs, first, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("%d rows, step %d: loss %v on the engine, %v on the TapeMachine", rows, step+1, got, want)
			}
		}
		if tr.Adam().T != 3 {
			t.Errorf("optimizer at update %d, want 3", tr.Adam().T)
		}
		got, err := tr.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if name, ok := equalWeights(host, hostWeights(host), got); !ok {
			t.Errorf("%d rows: weight %s differs after 3 steps", rows, name)
		}
		tr.Close()
	}
}

// TestGPT2TrainerSnapshot: training lowers the loss of a repeated batch;
// Restore takes the weights back, Download brings them to the host model,
// and on the CPU backend the engine trains the host tensors themselves
// (no copy). Bad input is an error, not a panic.
func TestGPT2TrainerSnapshot(t *testing.T) {
	cfg := Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 8, VocabSize: 12, LayerNormEpsilon: 1e-5}
	m, _ := New(cfg, 2)
	start := hostWeights(m)
	be := leakCheckedCPU(t, true)
	e, err := NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	if n := be.Live(); n != 0 {
		t.Errorf("%d buffers allocated for the weights, want none", n)
	}
	e.Close()
	tr, err := NewTrainer(m, be, AdamW())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	seqs, first := gpt2Batch(2, 8, cfg.VocabSize, 0)
	loss0, err := tr.TrainStep(seqs, first, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	loss := loss0
	for i := 0; i < 30; i++ {
		if loss, err = tr.TrainStep(seqs, first, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	if !(loss < loss0/2) {
		t.Errorf("loss %g after 31 steps, started at %g", loss, loss0)
	}
	trained, _ := tr.Snapshot()
	if _, same := equalWeights(m, start, trained); same {
		t.Fatal("training changed no weight")
	}
	if _, same := equalWeights(m, trained, hostWeights(m)); !same {
		t.Error("the host tensors are not the CPU backend's weights")
	}
	t.Run("restore", func(t *testing.T) {
		if err := tr.Restore(start); err != nil {
			t.Fatal(err)
		}
		back, _ := tr.Snapshot()
		if name, ok := equalWeights(m, start, back); !ok {
			t.Errorf("restored weight %s differs from the snapshot", name)
		}
	})
	t.Run("download", func(t *testing.T) {
		tr.Restore(trained)
		if err := tr.Download(); err != nil {
			t.Fatal(err)
		}
		if name, ok := equalWeights(m, trained, hostWeights(m)); !ok {
			t.Errorf("host weight %s is not the backend's", name)
		}
	})
	bad := []struct {
		name  string
		seqs  [][]int
		first []int
	}{
		{"no sequences", nil, nil},
		{"first past the end", [][]int{{11, 1, 11}}, []int{4}},
		{"too long", [][]int{make([]int, 9)}, []int{1}},
		{"id out of range", [][]int{{11, 40, 11}}, []int{1}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tr.TrainStep(tc.seqs, tc.first, 1e-2); err == nil {
				t.Error("no error")
			}
		})
	}
	t.Run("restore wrong size", func(t *testing.T) {
		if err := tr.Restore(trained[:1]); err == nil {
			t.Error("no error")
		}
	})
}

// leakCheckedCPU returns an engine CPU backend that fails the test if any
// buffer it allocated is still allocated when the test ends.
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
