package gpt2

import (
	"math"
	"runtime"
	"testing"
	"weak"

	G "gorgonia.org/gorgonia"
)

// gpt2CacheModel is a one-block GPT-2 small enough to compile many programs.
func gpt2CacheModel(t *testing.T) *Model {
	t.Helper()
	m, err := New(Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: 30, LayerNormEpsilon: 1e-5}, 5)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gpt2Batches are training batches of four (rows, width) shapes.
var gpt2Batches = []struct {
	seqs  [][]int
	first []int
}{
	{[][]int{{29, 1, 2, 3, 29}}, []int{1}},
	{[][]int{{29, 1, 2, 29}, {29, 5, 6, 7, 8, 29}}, []int{1, 2}},
	{[][]int{{29, 4, 5, 6, 7, 8, 9, 10, 11, 12, 29}}, []int{3}},
	{[][]int{{29, 3, 29}, {29, 9, 8, 29}, {29, 7, 29}}, []int{1, 1, 2}},
}

// checkGPT2Cache checks the count bound and the byte accounting.
func checkGPT2Cache(t *testing.T, e *Engine, maxGraphs int) {
	t.Helper()
	var sum int64
	for _, p := range e.progs {
		sum += p.bytes
	}
	if len(e.progs) > maxGraphs || sum != e.bytes {
		t.Fatalf("%d programs kept (bound %d), bytes %d accounted %d", len(e.progs), maxGraphs, sum, e.bytes)
	}
}

// TestGPT2ProgramCacheBound: training on more batch shapes than the bound
// keeps the engine's programs at the bound (by count, and by bytes) and
// gives the same losses and weights, bit for bit, as a trainer that keeps
// every program.
func TestGPT2ProgramCacheBound(t *testing.T) {
	probe, err := NewTrainer(gpt2CacheModel(t), leakCheckedCPU(t, true), AdamW())
	if err != nil {
		t.Fatal(err)
	}
	big := gpt2Batches[3]
	if _, err := probe.TrainStep(big.seqs, big.first, 1e-2); err != nil {
		t.Fatal(err)
	}
	var largest int64 // no program here is larger than the 3 x 16 one
	for _, p := range probe.progs {
		largest = p.bytes
	}
	probe.Close()
	for _, tc := range []struct {
		name      string
		maxGraphs int
		budget    int64
		want      int // programs kept at the end; -1: as many as fit the budget
	}{
		{"count", 2, 0, 2},
		{"one", 1, 1 << 40, 1},
		{"bytes", 8, largest, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ma, mb := gpt2CacheModel(t), gpt2CacheModel(t)
			ma.MaxGraphs, ma.GraphBudget = 100, 0
			mb.MaxGraphs, mb.GraphBudget = tc.maxGraphs, tc.budget
			all, err := NewTrainer(ma, leakCheckedCPU(t, true), AdamW())
			if err != nil {
				t.Fatal(err)
			}
			defer all.Close()
			bounded, err := NewTrainer(mb, leakCheckedCPU(t, true), AdamW())
			if err != nil {
				t.Fatal(err)
			}
			defer bounded.Close()
			// Every shape comes three times, so dropped programs are
			// compiled again after their weights have changed.
			for step := 0; step < 3*len(gpt2Batches); step++ {
				bt := gpt2Batches[step%len(gpt2Batches)]
				la, err := all.TrainStep(bt.seqs, bt.first, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				lb, err := bounded.TrainStep(bt.seqs, bt.first, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(la) != math.Float64bits(lb) {
					t.Fatalf("step %d: loss %v with every program kept, %v bounded", step, la, lb)
				}
				checkGPT2Cache(t, bounded.Engine, tc.maxGraphs)
				if tc.budget > 0 && len(bounded.progs) > 1 && bounded.bytes > tc.budget {
					t.Fatalf("step %d: %d bytes kept, budget %d", step, bounded.bytes, tc.budget)
				}
			}
			if tc.want < 0 {
				tc.want = len(bounded.progs)
				if tc.want >= len(gpt2Batches) {
					t.Errorf("the byte budget kept all %d programs", tc.want)
				}
			}
			if len(all.progs) != len(gpt2Batches) || len(bounded.progs) != tc.want {
				t.Errorf("%d programs kept unbounded (want %d), %d bounded (want %d)", len(all.progs), len(gpt2Batches), len(bounded.progs), tc.want)
			}
			if name, ok := equalWeights(ma, hostWeights(ma), hostWeights(mb)); !ok {
				t.Errorf("weight %s differs", name)
			}
		})
	}
}

// TestGPT2EvictedProgramFreed: a dropped program's buffers are freed and
// its graph is garbage at the next collection.
func TestGPT2EvictedProgramFreed(t *testing.T) {
	m := gpt2CacheModel(t)
	m.MaxGraphs = 1
	be := leakCheckedCPU(t, true)
	e, err := NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	score := func(batch int) weak.Pointer[G.Node] {
		if _, err := e.TokenLogProbs([][]int{{29, 1, 2}}, []int{1}, batch); err != nil {
			t.Fatal(err)
		}
		return weak.Make(e.progs[gpt2Key{b: batch, t: 8}].g.hidden)
	}
	w := score(1)
	live := be.Live()
	score(2)
	if be.Live() != live {
		t.Errorf("%d engine buffers live after dropping a program for another, %d before", be.Live(), live)
	}
	runtime.GC()
	if w.Value() != nil {
		t.Error("dropped graph still reachable after a collection")
	}
}
