package models

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"weak"

	G "gorgonia.org/gorgonia"
)

// gpt2CacheModel is a one-block GPT-2 small enough to build many graphs.
func gpt2CacheModel(t *testing.T) *GPT2 {
	t.Helper()
	m, err := NewGPT2(GPT2Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: 30, LayerNormEpsilon: 1e-5}, 5)
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
func checkGPT2Cache(t *testing.T, m *GPT2, maxGraphs int) {
	t.Helper()
	var sum int64
	for _, c := range m.graphs {
		sum += c.bytes
	}
	if len(m.graphs) > maxGraphs || sum != m.cachedBytes {
		t.Fatalf("%d graphs kept (bound %d), bytes %d accounted %d", len(m.graphs), maxGraphs, sum, m.cachedBytes)
	}
}

// TestGPT2GraphCacheBound: training on more batch shapes than the bound
// keeps the cache at the bound (by count, and by bytes) and gives the same
// losses and weights, bit for bit, as a model that keeps every graph.
func TestGPT2GraphCacheBound(t *testing.T) {
	probe := gpt2CacheModel(t)
	c, err := probe.graph(gpt2Key{b: 3, t: probe.Width(11), train: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.bytes <= 0 {
		t.Fatalf("graph of %d bytes", c.bytes)
	}
	for _, tc := range []struct {
		name      string
		maxGraphs int
		budget    int64
		want      int // graphs kept at the end; -1: as many as fit the budget
	}{
		{"count", 2, 0, 2},
		{"one", 1, 1 << 40, 1},
		{"bytes", 8, c.bytes, -1}, // no graph here is larger than c
	} {
		t.Run(tc.name, func(t *testing.T) {
			all, bounded := gpt2CacheModel(t), gpt2CacheModel(t)
			all.MaxGraphs, all.GraphBudget = 100, 0
			bounded.MaxGraphs, bounded.GraphBudget = tc.maxGraphs, tc.budget
			oa, err := all.NewOptimizer(GPT2AdamW())
			if err != nil {
				t.Fatal(err)
			}
			ob, _ := bounded.NewOptimizer(GPT2AdamW())
			// Every shape comes three times, so evicted graphs are rebuilt
			// after their weights have changed.
			for step := 0; step < 3*len(gpt2Batches); step++ {
				bt := gpt2Batches[step%len(gpt2Batches)]
				la, err := all.TrainStep(oa, bt.seqs, bt.first, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				lb, err := bounded.TrainStep(ob, bt.seqs, bt.first, 1e-2)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(la) != math.Float64bits(lb) {
					t.Fatalf("step %d: loss %v with every graph kept, %v bounded", step, la, lb)
				}
				checkGPT2Cache(t, bounded, tc.maxGraphs)
				if tc.budget > 0 && bounded.cachedBytes > tc.budget {
					t.Fatalf("step %d: %d bytes kept, budget %d", step, bounded.cachedBytes, tc.budget)
				}
			}
			if tc.want < 0 {
				tc.want = len(bounded.graphs)
				if tc.want >= len(gpt2Batches) {
					t.Errorf("the byte budget kept all %d graphs", tc.want)
				}
			}
			if len(all.graphs) != len(gpt2Batches) || len(bounded.graphs) != tc.want {
				t.Errorf("%d graphs kept unbounded (want %d), %d bounded (want %d)", len(all.graphs), len(gpt2Batches), len(bounded.graphs), tc.want)
			}
			wa, wb := all.Snapshot(), bounded.Snapshot()
			for i := range wa {
				if !slices.Equal(wa[i], wb[i]) {
					t.Errorf("weight %s differs", all.params[i].name)
				}
			}
		})
	}
}

// TestGPT2EvictedGraphFreed: an evicted training graph is garbage at the
// next collection (the tape machine's finalizer is cleared on eviction).
func TestGPT2EvictedGraphFreed(t *testing.T) {
	m := gpt2CacheModel(t)
	m.MaxGraphs = 1
	build := func(b int) weak.Pointer[G.Node] {
		c, err := m.graph(gpt2Key{b: b, t: 8, train: true})
		if err != nil {
			t.Fatal(err)
		}
		c.fill([][]int{{29, 1, 2}}, 29)
		if err := c.run(); err != nil {
			t.Fatal(err)
		}
		return weak.Make(c.loss)
	}
	w := build(1)
	build(2)
	runtime.GC()
	if w.Value() != nil {
		t.Error("evicted graph still reachable after a collection")
	}
}
