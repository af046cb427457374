//go:build gpu || gpuemu

package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/models/lstm"
	"compbench/models/pretrained"
	"compbench/ops"
)

// The GPU side of the side-by-side benchmarks of scripts/gpu_session.sh,
// beside BenchmarkGPUTrainStep and BenchmarkGPUGPT2Score: one
// lstm-attention training step (the shape of models/lstm's
// BenchmarkLSTMTrainStep and scripts/bench_torch_lstm.py), and a T5's
// forward and backward pass and its cached decoding (the shapes of
// models/pretrained's benchmarks and scripts/bench_torch_t5.py). Each
// reports tokens/s as its PyTorch counterpart counts them.

// lstmShape is an lstm-attention benchmark step: rows, source and target
// length, hidden size, layers, vocabularies.
type lstmShape struct{ b, s, t, h, layers, vs, vt int }

// lstmPaper is the benchmark's shape (models/lstm's bench constants).
var lstmPaper = lstmShape{64, 16, 24, 256, 2, 24, 12}

// lstmStep binds an lstm-attention model of shape sh to be and returns one
// training step (forward, backward, Adam; no dropout) and the target
// tokens it trains on.
func lstmStep(tb testing.TB, be engine.Backend, sh lstmShape) (func(step int) error, int) {
	tb.Helper()
	cfg := models.DefaultConfig()
	cfg.Variant, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Dropout = "lstm-attention", sh.h, sh.layers, 1, 0
	cfg.SrcVocab, cfg.TgtVocab = sh.vs, sh.vt
	m, err := lstm.New(cfg, 1, nil)
	if err != nil {
		tb.Fatal(err)
	}
	rng := data.NewRand(2)
	ex := make([]models.Example, sh.b)
	rows := make([]*models.Example, sh.b)
	for i := range ex {
		ex[i].Src, ex[i].Tgt = make([]int, sh.s), make([]int, sh.t)
		for k := range ex[i].Src {
			ex[i].Src[k] = models.UnkID + 1 + rng.IntN(sh.vs-models.UnkID-1)
		}
		for k := range ex[i].Tgt {
			ex[i].Tgt[k] = models.UnkID + 1 + rng.IntN(sh.vt-models.UnkID-1)
		}
		rows[i] = &ex[i]
	}
	bt := models.MakeBatch(rows, sh.b, 1)
	r, err := m.Bind(be, &ops.AdamConfig{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return func(step int) error {
		_, _, err := r.Step(bt, 0, step, 0, 1e-3)
		return err
	}, sh.b * sh.t
}

// t5Step compiles forward and backward of the mean cross-entropy of the
// T5 in dir over a random batch of b rows of s source and t target tokens
// (full length) on be, and returns one run of it and the target tokens.
func t5Step(tb testing.TB, be engine.Backend, dir string, b, s, t int) (func(step int) error, int) {
	tb.Helper()
	f, err := pretrained.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := pretrained.LoadT5(f)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := m.Graph(b, s, t, true, 0)
	if err != nil {
		tb.Fatal(err)
	}
	var params G.Nodes
	for i := range m.P.Names {
		params = append(params, g.Params[i])
	}
	grads, err := G.Grad(g.Loss, params...)
	if err != nil {
		tb.Fatal(err)
	}
	inputs := []*G.Node{g.Src, g.DecIn, g.Labels, g.EncBias, g.DecBias, g.CrossBias}
	p, err := engine.Compile(append(G.Nodes{g.Loss}, grads...), engine.Options{Inputs: inputs})
	if err != nil {
		tb.Fatal(err)
	}
	mc, err := engine.NewMachine(p, be)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mc.Close() })
	rng := data.NewRand(2)
	ids := func(n int) *tensor.Dense {
		v := make([]int, n)
		for i := range v {
			v[i] = 3 + rng.IntN(m.Cfg.VocabSize-3)
		}
		return tensor.New(tensor.WithShape(n), tensor.WithBacking(v))
	}
	lens := func(n int) []int {
		v := make([]int, b)
		for i := range v {
			v[i] = n
		}
		return v
	}
	enc, dec, cross := g.FillMasks(lens(s), lens(t))
	for n, v := range map[*G.Node]*tensor.Dense{g.Src: ids(b * s), g.DecIn: ids(b * t), g.Labels: ids(b * t),
		g.EncBias: enc, g.DecBias: dec, g.CrossBias: cross} {
		if err := mc.Set(n, v); err != nil {
			tb.Fatal(err)
		}
	}
	return func(int) error { return mc.Run() }, b * t
}

// t5Decode binds the T5 in dir to be, encodes b random sources of s
// tokens once, and returns one cached decoding of l positions per row
// (the tokens fed chosen in advance) and the tokens it produces.
func t5Decode(tb testing.TB, be engine.Backend, dir string, b, s, l int) (func(int) error, int) {
	tb.Helper()
	v, err := pretrained.NewVocab(dir)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := pretrained.New(models.Config{Variant: pretrained.TypeT5, Pretrained: dir, Mask: "causal", MaxSrcLen: 64, MaxTgtLen: 64}, 1, v)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := m.Bind(be, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	e := r.(*pretrained.Engine)
	rng := data.NewRand(2)
	src := make([]int, b*s)
	for i := range src {
		src[i] = models.NumSpecials + 3 + rng.IntN(m.Config().VocabSize-3)
	}
	mem, err := e.Encode(src, b, s)
	if err != nil {
		tb.Fatal(err)
	}
	toks := make([]int, b)
	return func(int) error {
		st, err := e.StartDecode(mem, l)
		if err != nil {
			return err
		}
		for k := range toks {
			toks[k] = models.StartID
		}
		for t := 0; t < l; t++ {
			if _, err := st.Step(toks); err != nil {
				return err
			}
			for k := range toks {
				toks[k] = models.NumSpecials + 4 + (t+k)%20
			}
		}
		return nil
	}, b * l
}

// timeSteps runs step once untimed (compiling and allocating), then b.N
// times, and reports ms/step and tokens/s.
func timeSteps(b *testing.B, step func(int) error, tokens int) {
	if err := step(0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := step(i + 1); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Microseconds())/1e3/float64(b.N), "ms/step")
	b.ReportMetric(float64(b.N*tokens)/el.Seconds(), "tokens/s")
}

// t5Dir is the T5 the T5 benchmarks run: $PRETRAINED_BENCH_DIR
// (scripts/gpu_session.sh writes a random one of t5-small's shape).
func t5Dir(b *testing.B) string {
	dir := os.Getenv("PRETRAINED_BENCH_DIR")
	if dir == "" {
		b.Skip("PRETRAINED_BENCH_DIR names no T5 checkpoint (scripts/seq2seq_reference.py random-checkpoint DIR makes one)")
	}
	return dir
}

// BenchmarkGPULSTMTrainStep is one lstm-attention training step on the
// GPU: 64 rows of 16 source and 24 target tokens, hidden 256, 2 layers.
func BenchmarkGPULSTMTrainStep(b *testing.B) {
	step, tokens := lstmStep(b, gpu(b), lstmPaper)
	timeSteps(b, step, tokens)
}

// BenchmarkGPUT5TrainStep is forward and backward of a T5 on the GPU, 16
// rows of 32 source and 32 target tokens (no optimizer step, as
// scripts/bench_torch_t5.py step).
func BenchmarkGPUT5TrainStep(b *testing.B) {
	step, tokens := t5Step(b, gpu(b), t5Dir(b), 16, 32, 32)
	timeSteps(b, step, tokens)
}

// BenchmarkGPUT5Decode is cached decoding of a T5 on the GPU: 16 rows of
// 31 source tokens, 64 positions each.
func BenchmarkGPUT5Decode(b *testing.B) {
	step, tokens := t5Decode(b, gpu(b), t5Dir(b), 16, 31, 64)
	timeSteps(b, step, tokens)
}

// TestGPUBenchSetups runs each benchmark's step twice at a tiny size on
// the GPU, so that a broken benchmark shows in the tests rather than in a
// GPU session's benchmark step.
func TestGPUBenchSetups(t *testing.T) {
	be := gpu(t)
	t5 := filepath.Join("..", "models", "pretrained", "testdata", "t5-tiny")
	for _, c := range []struct {
		name  string
		setup func() (func(int) error, int)
	}{
		{"lstm-attention", func() (func(int) error, int) { return lstmStep(t, be, lstmShape{3, 4, 5, 8, 2, 9, 7}) }},
		{"t5 step", func() (func(int) error, int) { return t5Step(t, be, t5, 2, 5, 4) }},
		{"t5 decode", func() (func(int) error, int) { return t5Decode(t, be, t5, 2, 5, 3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			step, tokens := c.setup()
			for i := range 2 {
				if err := step(i); err != nil {
					t.Fatal(err)
				}
			}
			if tokens <= 0 {
				t.Errorf("%d tokens per step", tokens)
			}
		})
	}
}
