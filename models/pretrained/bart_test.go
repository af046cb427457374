package pretrained

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/engine"
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

func loadBART(t *testing.T) (*BART, reference) {
	t.Helper()
	dir := filepath.Join("testdata", "bart-tiny")
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadBART(f)
	if err != nil {
		t.Fatal(err)
	}
	return m, readReference(t, dir)
}

// bartBatch builds the graph over all reference examples as one padded
// batch and returns it with its input values.
func bartBatch(t *testing.T, m *BART, ref reference) (*BARTGraph, map[*G.Node]*tensor.Dense) {
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
		src[i] = m.Cfg.PadID
	}
	for i := range dec {
		dec[i], lab[i] = m.Cfg.PadID, m.Cfg.PadID
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

// TestBARTMatchesReference: the padded batch's logits and loss equal the
// plain-PyTorch reference, on the TapeMachine (the oracle) and on the
// engine's CPU backend.
func TestBARTMatchesReference(t *testing.T) {
	m, ref := loadBART(t)
	V := m.Cfg.VocabSize
	t.Run("tape", func(t *testing.T) {
		g, vals := bartBatch(t, m, ref)
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
	t.Run("engine", func(t *testing.T) {
		g, vals := bartBatch(t, m, ref)
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

// TestBARTGradient compares the backward pass with central finite
// differences on a few weights of every tensor.
func TestBARTGradient(t *testing.T) {
	m, ref := loadBART(t)
	g, vals := bartBatch(t, m, ref)
	for n, v := range vals {
		if err := G.Let(n, v); err != nil {
			t.Fatal(err)
		}
	}
	var params G.Nodes
	var idx []int
	for i := range m.P.Names {
		if n, ok := g.nodes[i]; ok {
			params, idx = append(params, n), append(idx, i)
		}
	}
	if len(params) != len(m.P.Names) {
		t.Fatalf("the graph uses %d of %d weights", len(params), len(m.P.Names))
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
		w := m.P.Data(i)
		for _, j := range []int{0, len(w) / 2, len(w) - 1} {
			const h = 1e-2
			old := w[j]
			w[j] = old + h
			lp := run()
			w[j] = old - h
			lm := run()
			w[j] = old
			num := (lp - lm) / (2 * h)
			// float32 loss differences over 2h: about 1e-7/2h = 5e-6, plus
			// the O(h²) truncation of central differences.
			if d := math.Abs(num - float64(gr[j])); d > 2e-3+0.02*math.Abs(num) {
				t.Errorf("%s[%d]: backward %.6f, finite difference %.6f", m.P.Names[i], j, gr[j], num)
			}
		}
	}
}
