package engine_test

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
)

func records() []data.Record {
	return []data.Record{
		{ID: "a", Input: "jump twice", Output: "JUMP JUMP", Parts: []string{"JUMP JUMP"}},
		{ID: "b", Input: "walk and jump left", Output: "WALK LTURN JUMP", Parts: []string{"WALK", "LTURN JUMP"}},
		{ID: "c", Input: "walk", Output: "WALK", Parts: []string{"WALK"}},
		{ID: "d", Input: "look after run", Output: "RUN LOOK", Parts: []string{"RUN", "LOOK"}},
	}
}

// tiny builds a small model of variant with dropout 0.1 and a batch of all
// records.
func tiny(t testing.TB, variant string) (*transformer.Model, *models.Batch) {
	t.Helper()
	return tinyWith(t, variant, func(*models.Config) {})
}

// tinyWith is tiny with edit applied to the model's config.
func tinyWith(t testing.TB, variant string, edit func(*models.Config)) (*transformer.Model, *models.Batch) {
	t.Helper()
	recs := records()
	v := models.BuildVocab(recs)
	cfg := models.DefaultConfig()
	// "universal+act": the Universal Transformer with adaptive computation time.
	name, act := strings.CutSuffix(variant, "+act")
	if err := cfg.ApplyVariant(name); err != nil {
		t.Fatal(err)
	}
	cfg.ACT = act
	cfg.Layers, cfg.Heads, cfg.Dim, cfg.MLPDim, cfg.Dropout = 2, 2, 8, 16, 0.1
	cfg.RelBuckets, cfg.RelMaxDistance = 4, 8
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	edit(&cfg)
	m, err := transformer.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, err := models.Encode(v, recs, models.EncodeOptions{Separators: cfg.Separators, MaxSrc: 16, MaxTgt: 16})
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]*models.Example, len(ex))
	for i := range ex {
		rows[i] = &ex[i]
	}
	return m, models.MakeBatch(rows, 4, 4)
}

// compare checks got against want: bit for bit when tol is 0, else within
// tol times the larger of want's largest magnitude and floor. The floor
// matters for gradients that are zero in exact arithmetic (the key biases:
// softmax ignores a per-row constant), where both sides are rounding noise.
func compare(t *testing.T, what string, want, got []float32, tol, floor float64) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale float64
	for _, v := range want {
		if !math.IsInf(float64(v), 0) {
			scale = max(scale, math.Abs(float64(v)))
		}
	}
	for i := range want {
		if tol == 0 {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				t.Fatalf("%s[%d]: engine %v, TapeMachine %v (bit-identical expected)", what, i, got[i], want[i])
			}
			continue
		}
		if d := math.Abs(float64(want[i] - got[i])); !(d <= tol*max(scale, floor)) {
			t.Fatalf("%s[%d]: engine %v, TapeMachine %v (tolerance %g of %g)", what, i, got[i], want[i], tol, scale)
		}
	}
}

var variants = []string{"transformer", "relative", "relative-sep", "sep-full", "sep-to-sep-and-last", "sep-to-last", "universal", "universal+act"}

// backends are the CPU backend with BLAS products (bit-identical to the
// TapeMachine, which calls the same BLAS) and with the GEMM reference the
// GPU is checked against (its float32 sums run in another order: within a
// relative 1e-5 of each tensor's largest value).
var backends = []struct {
	name string
	be   *engine.CPU
	tol  float64
}{{"blas", &engine.CPU{BLAS: true}, 0}, {"ref", &engine.CPU{}, 1e-5}}

// TestTrainStepMatchesTapeMachine: one training step (dropout 0.1, label
// smoothing 0.1) through the engine gives the TapeMachine's loss and every
// gradient, for every Transformer variant.
func TestTrainStepMatchesTapeMachine(t *testing.T) {
	for _, variant := range variants {
		for _, bk := range backends {
			t.Run(variant+"/"+bk.name, func(t *testing.T) { checkTrainStep(t, variant, bk.be, bk.tol) })
		}
	}
}

func checkTrainStep(t *testing.T, variant string, be engine.Backend, tol float64) {
	m, bt := tiny(t, variant)
	const step = 5
	want, err := tapeModel{m}.Loss(bt, true, 0.1, step)
	if err != nil {
		t.Fatal(err)
	}
	view, err := m.TrainView(bt, 0.1, step)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.Compile(append(G.Nodes{view.Out}, view.Grads...), engine.Options{Inputs: view.Inputs})
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
	mc, err := engine.NewMachine(p, be)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if err := mc.Run(); err != nil {
		t.Fatal(err)
	}
	got, err := mc.Scalar(view.Out)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "loss", []float32{float32(want)}, []float32{got}, tol, 0)
	ps := m.Params()
	var floor float64 // the largest gradient of all
	for _, i := range view.ParamIdx {
		for _, v := range ps.Grads[i] {
			floor = max(floor, math.Abs(float64(v)))
		}
	}
	for k, gn := range view.Grads {
		i := view.ParamIdx[k]
		out := make([]float32, len(ps.Grads[i]))
		if err := mc.Read(gn, out); err != nil {
			t.Fatal(err)
		}
		compare(t, ps.Names[i], ps.Grads[i], out, tol, floor)
	}
}

// TestDecodeLogitsMatchTapeMachine: the decoding graph's logits.
func TestDecodeLogitsMatchTapeMachine(t *testing.T) {
	for _, variant := range []string{"transformer", "sep-to-last"} {
		for _, bk := range backends {
			t.Run(variant+"/"+bk.name, func(t *testing.T) {
				m, bt := tiny(t, variant)
				mem, err := tapeModel{m}.Encode(bt.Src, bt.B, bt.S)
				if err != nil {
					t.Fatal(err)
				}
				const pos = 2
				if _, err := (tapeModel{m}).Logits(mem, bt.DecIn, bt.T, pos); err != nil {
					t.Fatal(err)
				}
				view, err := m.DecodeView(mem, bt.DecIn, bt.T, pos)
				if err != nil {
					t.Fatal(err)
				}
				want := view.Out.Value().Data().([]float32)
				p, err := engine.Compile(G.Nodes{view.Out}, engine.Options{Inputs: view.Inputs})
				if err != nil {
					t.Fatal(err)
				}
				mc, err := engine.NewMachine(p, bk.be)
				if err != nil {
					t.Fatal(err)
				}
				if err := mc.Run(); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, len(want))
				if err := mc.Read(view.Out, got); err != nil {
					t.Fatal(err)
				}
				compare(t, "logits", want, got, bk.tol, 0)
			})
		}
	}
}

// checkPlan verifies a compiled program's memory plan: every activation a
// step reads was written earlier and is live until then, and no two
// activations live at the same step share arena memory.
func checkPlan(t *testing.T, p *engine.Program) {
	t.Helper()
	for s, st := range p.Steps {
		for _, id := range st.In {
			b := &p.Bufs[id]
			if b.Class == engine.Activation && !(b.Def < s && s <= b.LastUse) {
				t.Fatalf("step %d reads %s live over [%d, %d]", s, b.Name, b.Def, b.LastUse)
			}
		}
	}
	var act []*engine.Buffer
	for i := range p.Bufs {
		if b := &p.Bufs[i]; b.Class == engine.Activation {
			if b.Offset < 0 || b.Offset+b.Size > p.ArenaSize {
				t.Fatalf("%s at %d+%d outside the arena of %d", b.Name, b.Offset, b.Size, p.ArenaSize)
			}
			act = append(act, b)
		}
	}
	for i, a := range act {
		for _, b := range act[i+1:] {
			live := a.Def <= b.LastUse && b.Def <= a.LastUse
			mem := a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size
			if live && mem {
				t.Fatalf("%s [%d,%d] and %s [%d,%d] are live together and overlap in the arena", a.Name, a.Def, a.LastUse, b.Name, b.Def, b.LastUse)
			}
		}
	}
	if p.ArenaSize > p.ActivationTotal() {
		t.Fatalf("arena %d exceeds the sum of activations %d", p.ArenaSize, p.ActivationTotal())
	}
}
