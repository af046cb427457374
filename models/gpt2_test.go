package models

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/safetensors"
)

// gpt2Fixture is the tiny random GPT-2 shared with package lm; its expected
// log-probabilities come from scripts/gpt2_reference.py (PyTorch, float64).
const gpt2Fixture = "../lm/testdata/gpt2-tiny"

type gpt2Expected struct {
	Cases []struct {
		IDs      []int     `json:"ids"`
		LogProbs []float64 `json:"logprobs"`
	} `json:"cases"`
}

func loadExpected(t *testing.T) gpt2Expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gpt2Fixture, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e gpt2Expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestGPT2MatchesReference(t *testing.T) {
	m, err := LoadGPT2(gpt2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	exp := loadExpected(t)
	check := func(t *testing.T, got [][]float64, idx []int) {
		t.Helper()
		for k, i := range idx {
			want := exp.Cases[i].LogProbs
			if len(got[k]) != len(want) {
				t.Fatalf("case %d: %d log-probs, want %d", i, len(got[k]), len(want))
			}
			for j := range want {
				if math.Abs(got[k][j]-want[j]) > 1e-4 {
					t.Errorf("case %d token %d: %.6f, want %.6f", i, j+1, got[k][j], want[j])
				}
			}
		}
	}
	t.Run("one at a time", func(t *testing.T) {
		for i, c := range exp.Cases {
			got, err := m.TokenLogProbs([][]int{c.IDs}, []int{1}, 1)
			if err != nil {
				t.Fatal(err)
			}
			check(t, got, []int{i})
		}
	})
	t.Run("one padded batch", func(t *testing.T) {
		var seqs [][]int
		var first, idx []int
		for i, c := range exp.Cases {
			seqs = append(seqs, c.IDs)
			first = append(first, 1)
			idx = append(idx, i)
		}
		got, err := m.TokenLogProbs(seqs, first, 8)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, idx)
	})
	t.Run("suffix only", func(t *testing.T) {
		c := exp.Cases[0]
		got, err := m.TokenLogProbs([][]int{c.IDs}, []int{4}, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := c.LogProbs[3:]
		for j := range want {
			if math.Abs(got[0][j]-want[j]) > 1e-4 {
				t.Errorf("token %d: %.6f, want %.6f", j+4, got[0][j], want[j])
			}
		}
	})
}

func TestGPT2SaveLoadRoundTrip(t *testing.T) {
	cfg := GPT2Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 16, VocabSize: 50, LayerNormEpsilon: 1e-5}
	m, err := NewGPT2(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ck")
	out := data.NewOutputSet(false)
	if err := m.Save(out, dir); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	back, err := LoadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	seq := [][]int{{1, 2, 3, 4, 5, 49}}
	a, err := m.TokenLogProbs(seq, []int{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := back.TokenLogProbs(seq, []int{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for j := range a[0] {
		if a[0][j] != b[0][j] {
			t.Errorf("token %d: %g after reload, %g before", j, b[0][j], a[0][j])
		}
	}
}

// writeCheckpoint saves tensors and a config for the loader tests.
func writeCheckpoint(t *testing.T, cfg string, ts []safetensors.Tensor) string {
	t.Helper()
	dir := t.TempDir()
	if cfg != "" {
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644)
	}
	if ts != nil {
		f, err := os.Create(filepath.Join(dir, "model.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if err := safetensors.Write(f, ts, nil); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return dir
}

func TestLoadGPT2Errors(t *testing.T) {
	cfg := GPT2Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 16, VocabSize: 50, LayerNormEpsilon: 1e-5}
	m, _ := NewGPT2(cfg, 1)
	good, err := m.hfTensors()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NLayer = 2
	m2, _ := NewGPT2(cfg, 1)
	twoLayers, _ := m2.hfTensors()
	cfgJSON := `{"n_layer":1,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":50}`
	prefixed := append([]safetensors.Tensor(nil), good...)
	for i := range prefixed {
		prefixed[i].Name = "transformer." + prefixed[i].Name
	}
	withBuffers := append(append([]safetensors.Tensor(nil), good...), safetensors.Tensor{Name: "h.0.attn.bias", DType: safetensors.F32, Shape: []int{1}, Data: make([]byte, 4)})
	wrongShape := append([]safetensors.Tensor(nil), good...)
	wrongShape[0], _ = safetensors.FromFloat32s(good[0].Name, []int{49, 8}, make([]float32, 49*8))
	withNaN := append([]safetensors.Tensor(nil), good...)
	nan, _ := good[1].Float32s()
	nan[0] = float32(math.NaN())
	withNaN[1], _ = safetensors.FromFloat32s(good[1].Name, good[1].Shape, nan)
	tests := []struct {
		name    string
		cfg     string
		tensors []safetensors.Tensor
		want    string // "" for success
	}{
		{"plain names", cfgJSON, good, ""},
		{"transformer prefix", cfgJSON, prefixed, ""},
		{"mask buffers ignored", cfgJSON, withBuffers, ""},
		{"no config", "", good, "config.json"},
		{"no weights", cfgJSON, nil, "model.safetensors"},
		{"bad config json", `{"n_layer":`, good, "config.json"},
		{"inconsistent heads", `{"n_layer":1,"n_head":3,"n_embd":8,"n_positions":16,"vocab_size":50}`, good, "not divisible"},
		{"other activation", `{"n_layer":1,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":50,"activation_function":"relu"}`, good, "activation_function"},
		{"more layers than stored", `{"n_layer":2,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":50}`, good, "missing"},
		{"wrong vocab", `{"n_layer":1,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":49}`, good, "shape"},
		{"wrong shape", cfgJSON, wrongShape, "shape"},
		{"NaN weight", cfgJSON, withNaN, "model.safetensors: tensor " + good[1].Name + " holds NaN"},
		{"extra layer", cfgJSON, twoLayers, "unexpected tensor"},
		{"zero layers", `{"n_layer":0,"n_head":2,"n_embd":8,"n_positions":16,"vocab_size":50}`, good, "positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadGPT2(writeCheckpoint(t, tc.cfg, tc.tensors))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestTokenLogProbsRejects(t *testing.T) {
	cfg := GPT2Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 4, VocabSize: 10, LayerNormEpsilon: 1e-5}
	m, _ := NewGPT2(cfg, 1)
	tests := []struct {
		name  string
		seqs  [][]int
		first []int
	}{
		{"too long", [][]int{{1, 2, 3, 4, 5}}, []int{1}},
		{"id out of range", [][]int{{1, 10}}, []int{1}},
		{"negative id", [][]int{{1, -1}}, []int{1}},
		{"first zero", [][]int{{1, 2}}, []int{0}},
		{"nothing", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := m.TokenLogProbs(tc.seqs, tc.first, 1); err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestGPT2TrainStepLearns: repeated steps on one batch lower its loss, and
// the loss equals the mean negative log-probability that scoring reports.
func TestGPT2TrainStepLearns(t *testing.T) {
	cfg := GPT2Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 16, VocabSize: 30, LayerNormEpsilon: 1e-5}
	m, err := NewGPT2(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{{29, 1, 2, 3, 4, 29}, {29, 5, 6, 29}}
	first := []int{1, 2}
	lps, err := m.TokenLogProbs(seqs, first, 2)
	if err != nil {
		t.Fatal(err)
	}
	var nll float64
	n := 0
	for _, r := range lps {
		for _, v := range r {
			nll -= v
			n++
		}
	}
	o, err := m.NewOptimizer(GPT2AdamW())
	if err != nil {
		t.Fatal(err)
	}
	first0, err := m.TrainStep(o, seqs, first, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(first0-nll/float64(n)) > 1e-4 {
		t.Errorf("train loss %g, scoring gives mean NLL %g", first0, nll/float64(n))
	}
	snap := m.Snapshot()
	atSnap, _ := m.TokenLogProbs(seqs, first, 2)
	var last float64
	for i := 0; i < 30; i++ {
		if last, err = m.TrainStep(o, seqs, first, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	if !(last < first0/2) {
		t.Errorf("loss %g after 30 steps, started at %g", last, first0)
	}
	m.Restore(snap)
	again, _ := m.TokenLogProbs(seqs, first, 2)
	if again[0][0] != atSnap[0][0] || again[1][1] != atSnap[1][1] {
		t.Error("restore did not bring back the snapshot")
	}
}

// TestGPT2InferMatchesWholeGraph: the block-at-a-time scoring pass gives
// the same bits as the whole-model graph it replaces.
func TestGPT2InferMatchesWholeGraph(t *testing.T) {
	m, err := LoadGPT2(gpt2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	exp := loadExpected(t)
	var seqs [][]int
	longest := 0
	for _, c := range exp.Cases {
		seqs = append(seqs, c.IDs)
		longest = max(longest, len(c.IDs))
	}
	B, T := len(seqs)+1, m.Width(longest)
	whole, err := m.graph(gpt2Key{b: B, t: T})
	if err != nil {
		t.Fatal(err)
	}
	whole.fill(seqs, m.Cfg.VocabSize-1)
	if err := whole.run(); err != nil {
		t.Fatal(err)
	}
	want := whole.hidden.Value().Data().([]float32)
	before := m.Snapshot()
	var bufs []uintptr
	for run := 0; run < 2; run++ { // the second run reuses the buffers
		c, err := m.inferGraph(B, T)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.forwardInfer(c, seqs, m.Cfg.VocabSize-1)
		if err != nil {
			t.Fatal(err)
		}
		reused := 0
		for i, n := range c.block.order {
			if c.block.fresh[i] && !strings.HasPrefix(fmt.Sprint(n.Op()), "Reshape") {
				t.Errorf("block node %v is recomputed every run", n)
			}
			if n.Op() == nil || c.block.fresh[i] || n.IsScalar() {
				continue
			}
			if run == 0 {
				bufs = append(bufs, c.block.vals[i].Uintptr())
				continue
			}
			if c.block.vals[i].Uintptr() != bufs[reused] {
				t.Errorf("block node %v: new buffer on the second run", n)
			}
			reused++
		}
		if run == 1 && reused != len(bufs) {
			t.Errorf("%d block nodes reuse their buffers, %d had one", reused, len(bufs))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("run %d, element %d: %v, whole graph %v", run, i, got[i], want[i])
			}
		}
	}
	for i, w := range m.Snapshot() {
		for j := range w {
			if math.Float32bits(w[j]) != math.Float32bits(before[i][j]) {
				t.Fatalf("scoring changed weight %s[%d]", m.params[i].name, j)
			}
		}
	}
	// Graphs for many batch shapes: at most maxInferGraphs are kept.
	for b := 1; b <= maxInferGraphs+2; b++ {
		if _, err := m.TokenLogProbs([][]int{make([]int, 3)}, []int{1}, b); err != nil {
			t.Fatal(err)
		}
	}
	if len(m.infer) > maxInferGraphs {
		t.Errorf("%d inference graphs kept, want at most %d", len(m.infer), maxInferGraphs)
	}
}
