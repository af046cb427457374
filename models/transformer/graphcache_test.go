package transformer

import (
	"runtime"
	"slices"
	"testing"
	"weak"

	G "gorgonia.org/gorgonia"

	"compbench/models"
)

// cachedKeys lists the cached graph keys, sorted.
func cachedKeys(m *Model) []graphKey {
	var ks []graphKey
	for k := range m.graphs {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b graphKey) int {
		switch {
		case keyLess(a, b):
			return -1
		case keyLess(b, a):
			return 1
		}
		return 0
	})
	return ks
}

// checkAccounting fails unless the running byte total is the sum over the
// cached graphs.
func checkAccounting(t *testing.T, m *Model) {
	t.Helper()
	var sum int64
	for _, c := range m.graphs {
		sum += c.bytes
	}
	if sum != m.cachedBytes {
		t.Errorf("cachedBytes %d, cached graphs hold %d", m.cachedBytes, sum)
	}
}

// TestGraphBytes: the estimate leaves out exactly the parameter nodes and
// grows with the batch.
func TestGraphBytes(t *testing.T) {
	m, _, _ := tinyModel(t, "transformer", tinyRecords())
	small, err := m.build(graphKey{kind: kindTrain, b: 2, s: 4, t: 4})
	if err != nil {
		t.Fatal(err)
	}
	big, err := m.build(graphKey{kind: kindTrain, b: 4, s: 8, t: 8})
	if err != nil {
		t.Fatal(err)
	}
	if small.bytes <= 0 || big.bytes <= small.bytes {
		t.Errorf("estimates %d (B2 S4 T4) and %d (B4 S8 T8): want 0 < small < big", small.bytes, big.bytes)
	}
	g := small.out.Graph()
	var params int64
	for _, n := range g.AllNodes() {
		for i := range m.p.Names {
			if n.Name() == m.p.Names[i] && n.Value() == G.Value(m.p.Values[i]) {
				params += int64(n.Shape().TotalSize()) * int64(n.Dtype().Size())
			}
		}
	}
	if params == 0 {
		t.Fatal("no parameter nodes found in the graph")
	}
	if all := graphBytes(g, nil); all != small.bytes+params {
		t.Errorf("all nodes %d bytes, estimate %d + parameters %d", all, small.bytes, params)
	}
}

// TestGraphCacheBytes: least recently used graphs are evicted until the new
// one fits the byte budget; the count cap still holds.
func TestGraphCacheBytes(t *testing.T) {
	ka := graphKey{kind: kindTrain, b: 2, s: 4, t: 4}
	kb := graphKey{kind: kindTrain, b: 2, s: 8, t: 4}
	kc := graphKey{kind: kindTrain, b: 2, s: 8, t: 8}
	kd := graphKey{kind: kindLoss, b: 2, s: 4, t: 4}
	probe, _, _ := tinyModel(t, "relative-sep", tinyRecords())
	size := map[graphKey]int64{}
	for _, k := range []graphKey{ka, kb, kc, kd} {
		c, err := probe.build(k)
		if err != nil {
			t.Fatal(err)
		}
		size[k] = c.bytes
	}
	if !(size[ka] < size[kb] && size[kb] < size[kc]) {
		t.Fatalf("sizes %v: want a < b < c", size)
	}
	for _, tc := range []struct {
		name      string
		budget    int64
		maxGraphs int
		access    []graphKey
		want      []graphKey
	}{
		{"all fit", size[ka] + size[kb] + size[kc], 8, []graphKey{ka, kb, kc}, []graphKey{ka, kb, kc}},
		{"oldest evicted", size[ka] + size[kb] + size[kc] - 1, 8, []graphKey{ka, kb, kc}, []graphKey{kb, kc}},
		{"use refreshes", size[ka] + size[kb] + size[kc] - 1, 8, []graphKey{ka, kb, ka, kc}, []graphKey{ka, kc}},
		{"several evicted", size[kc], 8, []graphKey{ka, kb, kc}, []graphKey{kc}},
		{"small one joins", size[kc] + size[ka], 8, []graphKey{kb, kc, ka}, []graphKey{ka, kc}},
		{"larger than budget alone", 1, 8, []graphKey{ka, kc}, []graphKey{kc}},
		{"no byte bound", 0, 8, []graphKey{ka, kb, kc, kd}, []graphKey{ka, kb, kc, kd}},
		{"count cap", 1 << 40, 2, []graphKey{ka, kb, kc}, []graphKey{kb, kc}},
		{"kind is part of the key", size[ka] + size[kd], 8, []graphKey{ka, kd, ka}, []graphKey{ka, kd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := tinyModel(t, "relative-sep", tinyRecords())
			m.GraphBudget, m.MaxGraphs = tc.budget, tc.maxGraphs
			for _, k := range tc.access {
				c, err := m.graph(k)
				if err != nil {
					t.Fatal(err)
				}
				if c.bytes != size[k] {
					t.Errorf("graph %v: %d bytes, built alone %d", k, c.bytes, size[k])
				}
				checkAccounting(t, m)
			}
			if got := cachedKeys(m); !slices.Equal(got, tc.want) {
				t.Errorf("cached %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGraphBudgetResults: a budget that keeps one graph at a time gives the
// same losses and gradients as one that keeps them all, with dropout on and
// batch shapes alternating between training and evaluation (dropout
// masks are a function of seed, op number within the graph and step).
func TestGraphBudgetResults(t *testing.T) {
	for _, variant := range []string{"transformer", "sep-to-last"} {
		t.Run(variant, func(t *testing.T) {
			big, _, ex := tinyModel(t, variant, tinyRecords())
			tiny, _, _ := tinyModel(t, variant, tinyRecords())
			big.Cfg.Dropout, tiny.Cfg.Dropout = 0.3, 0.3
			big.GraphBudget, tiny.GraphBudget = 1<<40, 1
			batches := []*models.Batch{
				models.MakeBatch([]*models.Example{&ex[0]}, 2, 4),
				models.MakeBatch([]*models.Example{&ex[1], &ex[2]}, 2, 8),
				models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 3, 4),
			}
			// Every (batch, train) pair comes twice, so the tiny budget
			// rebuilds graphs that have run before.
			for step := 1; step <= 12; step++ {
				bt := batches[step%len(batches)]
				train := step%2 == 1
				lb, err := big.Loss(bt, train, 0.1, step)
				if err != nil {
					t.Fatal(err)
				}
				lt, err := tiny.Loss(bt, train, 0.1, step)
				if err != nil {
					t.Fatal(err)
				}
				if lb != lt {
					t.Errorf("step %d: loss %v with every graph kept, %v with one", step, lb, lt)
				}
				if train {
					for i, g := range big.p.Grads {
						if !slices.Equal(g, tiny.p.Grads[i]) {
							t.Errorf("step %d: gradient of %s differs", step, big.p.Names[i])
						}
					}
				}
			}
			if len(tiny.graphs) != 1 || len(big.graphs) != 6 {
				t.Errorf("%d graphs kept under the tiny budget (want 1), %d under the large one (want 6)", len(tiny.graphs), len(big.graphs))
			}
			checkAccounting(t, tiny)
			checkAccounting(t, big)
		})
	}
}

// TestEvictedGraphFreed: an evicted graph is garbage at the next collection
// (Gorgonia's tape machine finalizer would keep it, its nodes and values
// alive for one more).
func TestEvictedGraphFreed(t *testing.T) {
	m, _, _ := tinyModel(t, "transformer", tinyRecords())
	m.MaxGraphs = 1
	out := func(k graphKey) weak.Pointer[G.Node] {
		c, err := m.graph(k)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.run(c); err != nil {
			t.Fatal(err)
		}
		return weak.Make(c.out)
	}
	w := out(graphKey{kind: kindLoss, b: 2, s: 4, t: 4})
	out(graphKey{kind: kindLoss, b: 2, s: 8, t: 4})
	runtime.GC()
	if w.Value() != nil {
		t.Error("evicted graph still reachable after a collection")
	}
}
