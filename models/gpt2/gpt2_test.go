package gpt2

import (
	"encoding/json"
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
const gpt2Fixture = "../../lm/testdata/gpt2-tiny"

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

// scorer runs m on the engine's CPU backend; the test fails if closing it
// leaves a buffer allocated.
func scorer(t *testing.T, m *Model) *Engine {
	t.Helper()
	e, err := NewEngine(m, leakCheckedCPU(t, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestGPT2MatchesReference(t *testing.T) {
	m, err := Load(gpt2Fixture)
	if err != nil {
		t.Fatal(err)
	}
	e := scorer(t, m)
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
			got, err := e.TokenLogProbs([][]int{c.IDs}, []int{1}, 1)
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
		got, err := e.TokenLogProbs(seqs, first, 8)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, idx)
	})
	t.Run("suffix only", func(t *testing.T) {
		c := exp.Cases[0]
		got, err := e.TokenLogProbs([][]int{c.IDs}, []int{4}, 1)
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
	cfg := Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 16, VocabSize: 50, LayerNormEpsilon: 1e-5}
	m, err := New(cfg, 3)
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
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	seq := [][]int{{1, 2, 3, 4, 5, 49}}
	a, err := scorer(t, m).TokenLogProbs(seq, []int{1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := scorer(t, back).TokenLogProbs(seq, []int{1}, 1)
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
	cfg := Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 16, VocabSize: 50, LayerNormEpsilon: 1e-5}
	m, _ := New(cfg, 1)
	good, err := m.hfTensors()
	if err != nil {
		t.Fatal(err)
	}
	cfg.NLayer = 2
	m2, _ := New(cfg, 1)
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
			_, err := Load(writeCheckpoint(t, tc.cfg, tc.tensors))
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
	cfg := Config{NLayer: 1, NHead: 2, NEmbd: 8, NPositions: 4, VocabSize: 10, LayerNormEpsilon: 1e-5}
	m, _ := New(cfg, 1)
	e := scorer(t, m)
	tests := []struct {
		name  string
		seqs  [][]int
		first []int
		batch int
	}{
		{"too long", [][]int{{1, 2, 3, 4, 5}}, []int{1}, 1},
		{"id out of range", [][]int{{1, 10}}, []int{1}, 1},
		{"negative id", [][]int{{1, -1}}, []int{1}, 1},
		{"first zero", [][]int{{1, 2}}, []int{0}, 1},
		{"first past the end", [][]int{{1, 2}}, []int{3}, 1},
		{"batch too small", [][]int{{1, 2}, {3, 4}}, []int{1, 1}, 1},
		{"nothing", nil, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := e.TokenLogProbs(tc.seqs, tc.first, tc.batch); err == nil {
				t.Error("no error")
			}
		})
	}
}
