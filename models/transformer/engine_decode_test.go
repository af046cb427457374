package transformer

import (
	"fmt"
	"math"
	"testing"

	"compbench/engine"
	"compbench/models"
)

// The engine decoder is checked against the definition of decoding: the
// decoder graph on Gorgonia's TapeMachine (Model.Logits) re-run over
// each row's whole prefix at every step.

// graphPrefix is a DecodeState that re-runs the decoder graph over every
// row's prefix: row b's logits at step t are Logits over its t+1 fed
// tokens, with its memory row. Reorder permutes the histories only, as the
// incremental decoder permutes its caches and keeps each row's memory.
type graphPrefix struct {
	m    *Model
	mem  *models.Memory
	hist [][]int
}

func (p *graphPrefix) Step(tokens []int) ([]float32, error) {
	for b, tok := range tokens {
		p.hist[b] = append(p.hist[b], tok)
	}
	n := len(p.hist[0])
	T := models.RoundUp(n, 4)
	in := make([]int, p.mem.B*T)
	for b, h := range p.hist {
		copy(in[b*T:], h)
	}
	return p.m.Logits(p.mem, in, T, n-1)
}

func (p *graphPrefix) Reorder(from []int) {
	old := p.hist
	p.hist = make([][]int, len(old))
	for i, f := range from {
		p.hist[i] = append([]int(nil), old[f]...)
	}
}

// fp32Unit is the unit roundoff of float32, u = 2^-24.
const fp32Unit = 0x1p-24

// gammaN is Higham's γ_n = n·u/(1 − n·u): a float32 sum of n terms in any
// order lies within γ_n·Σ|terms| of the exact value, so two orders differ
// by at most 2·γ_n of Σ|terms|.
func gammaN(n int) float64 {
	nu := float64(n) * fp32Unit
	return nu / (1 - nu)
}

// stepTol is the tolerance, relative to the larger of 1 and the largest
// logit magnitude, between the engine's step logits and the graph's, for
// config c with sums of at most n terms besides D and MLP (the source and
// decoded lengths). The two run the same float32 operations in other
// summation orders (one query row against a whole prefix, BLAS blockings,
// loops), encoder included when the engine's memory comes from its own
// Encode. A sum of at most n terms computed in two orders differs by at
// most 2·γ_n of its scale, and a step passes through 30 sums in sequence
// per layer: the encoder's 11 (two LayerNorms' mean and variance, the
// projections, scores, softmax sum, weighted values, output projection,
// the feed-forward's two products) and the decoder's 19 (three LayerNorms'
// mean and variance; for self-attention the projections, scores, softmax
// sum, weighted values and output projection; for cross-attention the
// query projection, the memory's key and value projection, scores,
// softmax sum, weighted values and output projection; the feed-forward's
// two products), then 5 (the final LayerNorms of encoder and decoder and
// the output projection). The differences add. Like cmd/compbench's
// crossTol, the bound assumes no amplification beyond each sum's scale.
func stepTol(c Config, n int) float64 {
	n = max(n, c.Dim, c.MLPDim)
	return 2 * float64(30*c.Layers+5) * gammaN(n)
}

// logitScale is the larger of 1 and the largest magnitude in x.
func logitScale(x []float32) float64 {
	s := 1.0
	for _, v := range x {
		s = max(s, math.Abs(float64(v)))
	}
	return s
}

// TestEngineStepMatchesGraph: step-by-step decoding on the engine (the
// step graphs over cached keys and values; BLAS or reference GEMMs) gives
// the logits of the decoder graph over the whole prefix, for every
// Transformer variant, through separators and beam reorders, with source
// rows of different lengths and a padding row.
func TestEngineStepMatchesGraph(t *testing.T) {
	variants := []string{"transformer", "relative", "relative-sep", "sep-to-last", "sep-to-sep-and-last", "sep-full", "universal", "universal+act"}
	for _, variant := range variants {
		for _, blas := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/blas=%v", variant, blas), func(t *testing.T) { checkStepMatchesGraph(t, variant, blas) })
		}
	}
}

func checkStepMatchesGraph(t *testing.T, variant string, blas bool) {
	m, _, ex := tinyModel(t, variant, tinyRecords())
	bt := models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 4, 4) // a padding row
	if bt.B != 4 || len(ex[1].Src) == len(ex[2].Src) {
		t.Fatalf("batch of %d rows, sources %v %v", bt.B, ex[1].Src, ex[2].Src)
	}
	em, err := NewEngine(m, leakCheckedCPU(t, blas))
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	// Two rows per source, as beam search has: a reorder moves a row's
	// history to a row of the same source. (From another source it would
	// not be a prefix the graph can decode: from the second layer on, the
	// cached keys and values depend on the memory.)
	const rep = 2
	mem, err := m.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	emem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	mem, emem = mem.Repeat(rep), emem.Repeat(rep)
	B := mem.B
	// START, then words and separators, rows apart; reorders in between.
	seq := [][]int{{models.StartID}, {4, 5}, {models.SepID}, {5, 5, 4}, {models.SepID, 4}, {5}, {models.SepID}}
	perms := [][]int{nil, {1, 0, 3, 2, 5, 4, 7, 6}, nil, {0, 0, 2, 3, 5, 5, 6, 6}, {1, 1, 3, 3, 4, 4, 7, 7}, nil, nil}
	steps := len(seq)
	st, err := em.StartDecode(emem, steps)
	if err != nil {
		t.Fatal(err)
	}
	oracle := &graphPrefix{m: m, mem: mem, hist: make([][]int, B)}
	tol := stepTol(m.Cfg, max(bt.S, steps))
	for pos := 0; pos < steps; pos++ {
		toks := make([]int, B)
		for b := range toks {
			toks[b] = seq[pos][b%len(seq[pos])]
		}
		want, err := oracle.Step(toks)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.Step(toks)
		if err != nil {
			t.Fatal(err)
		}
		scale := logitScale(want)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*scale) {
				t.Fatalf("step %d: logit %d is %v, the graph gives %v (tolerance %.3g of %.3g)", pos, i, got[i], want[i], tol, scale)
			}
		}
		if p := perms[pos]; p != nil {
			oracle.Reorder(p)
			st.Reorder(p)
		}
	}
}

func TestRepeatOf(t *testing.T) {
	orig := &models.Memory{B: 2, S: 2, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8}, SrcLen: []int{2, 1}}
	changed := orig.Repeat(2)
	changed.Data[9] = -1
	lens := orig.Repeat(2)
	lens.SrcLen[3] = 2
	for _, c := range []struct {
		name string
		mem  *models.Memory
		want bool
	}{
		{"itself", orig, true},
		{"repeated twice", orig.Repeat(2), true},
		{"repeated three times", orig.Repeat(3), true},
		{"one value changed", changed, false},
		{"one length changed", lens, false},
		{"other source length", &models.Memory{B: 2, S: 1, Data: orig.Data[:4], SrcLen: []int{1, 1}}, false},
		{"fewer rows", &models.Memory{B: 1, S: 2, Data: orig.Data[:4], SrcLen: []int{2}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := repeatOf(c.mem, orig); got != c.want {
				t.Fatalf("repeatOf = %v, want %v", got, c.want)
			}
		})
	}
}

// TestEngineDecodeMemory: decoding starts from the encoder output Encode
// left on the backend (also for its beam repeats), uploads any other
// memory, and decodes the graph's logits either way.
func TestEngineDecodeMemory(t *testing.T) {
	m, _, ex := tinyModel(t, "relative", tinyRecords())
	bt := models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 4, 4)
	em, err := NewEngine(m, leakCheckedCPU(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	mem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	encoded := &em.enc.buf.([]float32)[0]
	other := &models.Memory{B: mem.B, S: mem.S, Data: append([]float32(nil), mem.Data...), SrcLen: mem.SrcLen}
	other.Data[0] += 1e-3
	const steps = 3
	tol := stepTol(m.Cfg, max(bt.S, steps))
	for _, c := range []struct {
		name    string
		mem     *models.Memory
		onDev   bool
		distinc int
	}{
		{"encoded", mem, true, mem.B},
		{"beam repeat", mem.Repeat(3), true, mem.B},
		{"other values", other, false, other.B},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := em.StartDecode(c.mem, steps)
			if err != nil {
				t.Fatal(err)
			}
			buf, rows := em.encoded(c.mem)
			if onDev := buf != nil && &buf.([]float32)[0] == encoded; onDev != c.onDev || rows != c.distinc {
				t.Fatalf("encoder output reused %v with %d distinct rows, want %v and %d", onDev, rows, c.onDev, c.distinc)
			}
			// The graph's logits over the same memory.
			oracle := &graphPrefix{m: m, mem: c.mem, hist: make([][]int, c.mem.B)}
			toks := make([]int, c.mem.B)
			for i := range toks {
				toks[i] = models.StartID
			}
			for step := 0; step < steps; step++ {
				want, err := oracle.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				scale := logitScale(want)
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*scale) {
						t.Fatalf("step %d: logit %d is %v, the graph gives %v", step, i, got[i], want[i])
					}
				}
				for i := range toks {
					toks[i] = 4 + (step+i)%2
				}
			}
		})
	}
	t.Run("evicted encode program", func(t *testing.T) {
		em.m.MaxGraphs, em.Max = 1, 1
		if _, err := em.Loss(bt, false, 0, 0); err != nil { // evicts the encode program
			t.Fatal(err)
		}
		if _, err := em.StartDecode(mem, steps); err != nil {
			t.Fatal(err)
		}
		if buf, _ := em.encoded(mem); buf != nil {
			t.Fatal("memory of an evicted program reused")
		}
	})
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
