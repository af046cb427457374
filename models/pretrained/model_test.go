package pretrained

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/safetensors"
)

// reference is a fixture's reference.json (scripts/seq2seq_reference.py).
type reference struct {
	Examples []struct {
		InputIDs        []int       `json:"input_ids"`
		DecoderInputIDs []int       `json:"decoder_input_ids"`
		Labels          []int       `json:"labels"`
		Logits          [][]float64 `json:"logits"`
		LabelLogprobs   []float64   `json:"label_logprobs"`
	} `json:"examples"`
}

func readReference(t *testing.T, dir string) reference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// model is what the tests need of BART and T5.
type model interface {
	Graph(B, S, T int, labels bool, eps float32) (*Graph, error)
}

// loadFixture opens testdata/name and loads its model.
func loadFixture(t *testing.T, name string) (model, *models.Params, Config, reference) {
	t.Helper()
	dir := filepath.Join("testdata", name)
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ref := readReference(t, dir)
	if f.Config.ModelType == TypeBART {
		m, err := LoadBART(f)
		if err != nil {
			t.Fatal(err)
		}
		return m, &m.P, m.Cfg, ref
	}
	m, err := LoadT5(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, &m.P, m.Cfg, ref
}

// fixtures are the tiny checkpoints of scripts/seq2seq_reference.py.
var fixtures = []string{"t5-tiny", "t5v11-tiny", "bart-tiny"}

// batch builds the graph over all reference examples as one padded batch
// and returns it with its input values.
func batch(t *testing.T, m model, cfg Config, ref reference) (*Graph, map[*G.Node]*tensor.Dense) {
	t.Helper()
	B, S, T := len(ref.Examples), 0, 0
	for _, e := range ref.Examples {
		S, T = max(S, len(e.InputIDs)), max(T, len(e.DecoderInputIDs))
	}
	g, err := m.Graph(B, S, T, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	src, dec, lab := make([]int, B*S), make([]int, B*T), make([]int, B*T)
	srcLen, decLen := make([]int, B), make([]int, B)
	for i := range src {
		src[i] = cfg.PadID
	}
	for i := range dec {
		dec[i], lab[i] = cfg.PadID, cfg.PadID
	}
	for b, e := range ref.Examples {
		copy(src[b*S:], e.InputIDs)
		copy(dec[b*T:], e.DecoderInputIDs)
		copy(lab[b*T:], e.Labels)
		srcLen[b], decLen[b] = len(e.InputIDs), len(e.DecoderInputIDs)
	}
	enc, decM, cross := g.FillMasks(srcLen, decLen)
	ints := func(v []int) *tensor.Dense { return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v)) }
	return g, map[*G.Node]*tensor.Dense{g.Src: ints(src), g.DecIn: ints(dec), g.Labels: ints(lab),
		g.EncBias: enc, g.DecBias: decM, g.CrossBias: cross}
}

// checkLogits compares the logits [B*T, V] of real positions with the
// reference (1e-4, the float64 reference against float32 arithmetic of a
// 2-layer width-16 model, whose rounding is about 1e-6).
func checkLogits(t *testing.T, ref reference, T, V int, got []float32) {
	t.Helper()
	for b, e := range ref.Examples {
		for i, row := range e.Logits {
			for v, want := range row {
				if g := float64(got[(b*T+i)*V+v]); math.Abs(g-want) > 1e-4 {
					t.Fatalf("example %d, position %d, token %d: logit %v, reference %v", b, i, v, g, want)
				}
			}
		}
	}
}

// wantLoss is the reference's mean label cross-entropy.
func wantLoss(ref reference) float64 {
	sum, n := 0.0, 0
	for _, e := range ref.Examples {
		for _, lp := range e.LabelLogprobs {
			sum -= lp
			n++
		}
	}
	return sum / float64(n)
}

// TestMatchesReference: each fixture's padded batch gives the logits and
// loss of the plain-PyTorch reference, on the TapeMachine (the oracle) and
// on the engine's CPU backend.
func TestMatchesReference(t *testing.T) {
	for _, name := range fixtures {
		m, _, cfg, ref := loadFixture(t, name)
		V := cfg.VocabSize
		t.Run(name+"/tape", func(t *testing.T) {
			g, vals := batch(t, m, cfg, ref)
			for n, v := range vals {
				if err := G.Let(n, v); err != nil {
					t.Fatal(err)
				}
			}
			vm := G.NewTapeMachine(g.G)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			checkLogits(t, ref, g.T, V, g.Logits.Value().Data().([]float32))
			if got := float64(g.Loss.Value().Data().(float32)); math.Abs(got-wantLoss(ref)) > 1e-5 {
				t.Errorf("loss %v, reference %v", got, wantLoss(ref))
			}
		})
		t.Run(name+"/engine", func(t *testing.T) {
			g, vals := batch(t, m, cfg, ref)
			inputs := []*G.Node{g.Src, g.DecIn, g.Labels, g.EncBias, g.DecBias, g.CrossBias}
			p, err := engine.Compile([]*G.Node{g.Logits, g.Loss}, engine.Options{Inputs: inputs})
			if err != nil {
				t.Fatal(err)
			}
			mc, err := engine.NewMachine(p, &engine.CPU{BLAS: true})
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			for _, n := range inputs {
				if err := mc.Set(n, vals[n]); err != nil {
					t.Fatal(err)
				}
			}
			if err := mc.Run(); err != nil {
				t.Fatal(err)
			}
			out := make([]float32, g.B*g.T*V)
			if err := mc.Read(g.Logits, out); err != nil {
				t.Fatal(err)
			}
			checkLogits(t, ref, g.T, V, out)
			got, err := mc.Scalar(g.Loss)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(float64(got)-wantLoss(ref)) > 1e-5 {
				t.Errorf("loss %v, reference %v", got, wantLoss(ref))
			}
		})
	}
}

// TestGradient compares each model's backward pass with central finite
// differences on a few weights of every tensor.
func TestGradient(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m, p, cfg, ref := loadFixture(t, name)
			g, vals := batch(t, m, cfg, ref)
			for n, v := range vals {
				if err := G.Let(n, v); err != nil {
					t.Fatal(err)
				}
			}
			var params G.Nodes
			var idx []int
			for i := range p.Names {
				if n, ok := g.Params[i]; ok {
					params, idx = append(params, n), append(idx, i)
				}
			}
			if len(params) != len(p.Names) {
				t.Fatalf("the graph uses %d of %d weights", len(params), len(p.Names))
			}
			grads, err := G.Grad(g.Loss, params...)
			if err != nil {
				t.Fatal(err)
			}
			vm := G.NewTapeMachine(g.G)
			defer vm.Close()
			run := func() float64 {
				vm.Reset()
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				return float64(g.Loss.Value().Data().(float32))
			}
			run()
			for k, i := range idx {
				gr := append([]float32(nil), grads[k].Value().Data().([]float32)...)
				w := p.Data(i)
				for _, j := range []int{0, len(w) / 2, len(w) - 1} {
					// h small enough that few steps cross a ReLU's kink (T5
					// v1.0), large enough for float32 losses.
					const h = 1e-3
					old := w[j]
					w[j] = old + h
					lp := run()
					w[j] = old - h
					lm := run()
					w[j] = old
					num := (lp - lm) / (2 * h)
					// float32 loss differences over 2h: about 1e-7/2h = 5e-5,
					// plus the O(h²) truncation of central differences.
					if d := math.Abs(num - float64(gr[j])); d > 2e-3+0.02*math.Abs(num) {
						t.Errorf("%s[%d]: backward %.6f, finite difference %.6f", p.Names[i], j, gr[j], num)
					}
				}
			}
		})
	}
}

// TestSaveRoundTrip: Save writes a folder that Open accepts and whose
// files hold the source folder's tensors, config and tokenizer exactly.
func TestSaveRoundTrip(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m, _, _, _ := loadFixture(t, name)
			dir := filepath.Join(t.TempDir(), "saved")
			out := data.NewOutputSet(false)
			var err error
			switch mm := m.(type) {
			case *T5:
				err = mm.Save(out, dir)
			case *BART:
				err = mm.Save(out, dir)
			}
			if err == nil {
				err = out.Commit()
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Open(dir); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join("testdata", name)
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if e.Name() == "model.safetensors" {
					continue
				}
				a, _ := os.ReadFile(filepath.Join(src, e.Name()))
				b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				if string(a) != string(b) {
					t.Errorf("%s differs from the source folder's", e.Name())
				}
			}
			want, err := safetensors.ReadFile(filepath.Join(src, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := safetensors.ReadFile(filepath.Join(dir, "model.safetensors"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Names()) != len(want.Names()) {
				t.Fatalf("%d tensors written, the source has %d", len(got.Names()), len(want.Names()))
			}
			for _, n := range want.Names() {
				w, _ := want.Get(n)
				g, ok := got.Get(n)
				if !ok || fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) || string(g.Data) != string(w.Data) {
					t.Errorf("tensor %s differs from the source's", n)
				}
			}
		})
	}
}
