package pretrained

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/blas"
	"compbench/data"
	"compbench/engine"
	"compbench/models"
)

// BenchmarkT5TrainStep times forward and backward of the mean
// cross-entropy of a random batch (16 rows, 32 source and 32 target
// tokens, full length) of the T5 in $PRETRAINED_BENCH_DIR on the engine's
// CPU backend (scripts/bench_pretrained.sh makes a t5-small-shaped one and
// times the same step in PyTorch). Skipped without the variable.
func BenchmarkT5TrainStep(b *testing.B) {
	dir := os.Getenv("PRETRAINED_BENCH_DIR")
	if dir == "" {
		b.Skip("PRETRAINED_BENCH_DIR names no checkpoint (scripts/bench_pretrained.sh makes one)")
	}
	blas.Use()
	f, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := LoadT5(f)
	if err != nil {
		b.Fatal(err)
	}
	const B, S, T = 16, 32, 32
	g, err := m.Graph(B, S, T, true, 0)
	if err != nil {
		b.Fatal(err)
	}
	var params G.Nodes
	for i := range m.P.Names {
		params = append(params, g.Params[i])
	}
	grads, err := G.Grad(g.Loss, params...)
	if err != nil {
		b.Fatal(err)
	}
	inputs := []*G.Node{g.Src, g.DecIn, g.Labels, g.EncBias, g.DecBias, g.CrossBias}
	p, err := engine.Compile(append(G.Nodes{g.Loss}, grads...), engine.Options{Inputs: inputs})
	if err != nil {
		b.Fatal(err)
	}
	mc, err := engine.NewMachine(p, &engine.CPU{BLAS: true})
	if err != nil {
		b.Fatal(err)
	}
	defer mc.Close()
	rng := data.NewRand(2)
	ids := func(n int) *tensor.Dense {
		v := make([]int, n)
		for i := range v {
			v[i] = 3 + rng.IntN(m.Cfg.VocabSize-3)
		}
		return tensor.New(tensor.WithShape(n), tensor.WithBacking(v))
	}
	full := func(n int) []int {
		v := make([]int, n)
		for i := range v {
			v[i] = S
		}
		return v
	}
	enc, dec, cross := g.FillMasks(full(B), full(B))
	for n, v := range map[*G.Node]*tensor.Dense{g.Src: ids(B * S), g.DecIn: ids(B * T), g.Labels: ids(B * T),
		g.EncBias: enc, g.DecBias: dec, g.CrossBias: cross} {
		if err := mc.Set(n, v); err != nil {
			b.Fatal(err)
		}
	}
	if err := mc.Run(); err != nil { // first run: allocations
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := mc.Run(); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	b.ReportMetric(float64(el.Milliseconds())/float64(b.N), "ms/step")
	b.ReportMetric(float64(b.N*B*T)/el.Seconds(), "tokens/s")
	if s, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(s), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
				if kb, err := strconv.Atoi(f[1]); err == nil {
					b.ReportMetric(float64(kb)/1024, "MB-peak")
				}
			}
		}
	}
}

// BenchmarkT5Decode times decoding with the key/value cache (16 rows of
// 31 random source tokens, encoded once; 64 positions each, the tokens
// fed chosen in advance) of the T5 in $PRETRAINED_BENCH_DIR on the
// engine's CPU backend, its programs compiled before the timing
// (scripts/bench_pretrained.sh times greedy decoding of the same shape in
// PyTorch). Skipped without the variable.
func BenchmarkT5Decode(b *testing.B) {
	dir := os.Getenv("PRETRAINED_BENCH_DIR")
	if dir == "" {
		b.Skip("PRETRAINED_BENCH_DIR names no checkpoint (scripts/bench_pretrained.sh makes one)")
	}
	blas.Use()
	v, err := NewVocab(dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(models.Config{Variant: TypeT5, Pretrained: dir, Mask: "causal", MaxSrcLen: 64, MaxTgtLen: 64}, 1, v)
	if err != nil {
		b.Fatal(err)
	}
	r, err := m.Bind(&engine.CPU{BLAS: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	const B, S, L = 16, 31, 64
	rng := data.NewRand(2)
	src := make([]int, B*S)
	for i := range src {
		src[i] = models.NumSpecials + 3 + rng.IntN(m.Config().VocabSize-3)
	}
	mem, err := r.(*Engine).Encode(src, B, S)
	if err != nil {
		b.Fatal(err)
	}
	toks := make([]int, B)
	// The programs compile on the first decoding, outside the timing.
	if st, err := r.(*Engine).StartDecode(mem, L); err != nil {
		b.Fatal(err)
	} else if _, err := st.Step(toks); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	steps := 0
	for i := 0; i < b.N; i++ {
		st, err := r.(*Engine).StartDecode(mem, L)
		if err != nil {
			b.Fatal(err)
		}
		for k := range toks {
			toks[k] = models.StartID
		}
		for t := 0; t < L; t++ {
			if _, err := st.Step(toks); err != nil {
				b.Fatal(err)
			}
			for k := range toks {
				toks[k] = models.NumSpecials + 4 + (t+k)%20
			}
			steps++
		}
	}
	b.ReportMetric(float64(steps*B)/time.Since(start).Seconds(), "tokens/s")
}
