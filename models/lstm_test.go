package models

import (
	"math"
	"strings"
	"testing"

	"compbench/data"
)

// fdCheck compares analytic gradients with central differences of f on
// every entry of w (or a stride of them).
func fdCheck(t *testing.T, name string, w, grad []float32, f func() float64, stride int) {
	t.Helper()
	const h = 1e-2
	bad := 0
	for i := 0; i < len(w); i += stride {
		old := w[i]
		w[i] = old + h
		up := f()
		w[i] = old - h
		down := f()
		w[i] = old
		num := (up - down) / (2 * h)
		an := float64(grad[i])
		if math.Abs(num-an) > 2e-3+3e-2*math.Max(math.Abs(num), math.Abs(an)) {
			if bad < 5 {
				t.Errorf("%s[%d]: analytic %.6f, numeric %.6f", name, i, an, num)
			}
			bad++
		}
	}
}

func TestLSTMCellGradient(t *testing.T) {
	const n, in, H = 3, 4, 5
	rng := data.NewRand(7)
	rnd := func(k int, s float64) []float32 {
		out := make([]float32, k)
		for i := range out {
			out[i] = float32((2*rng.Float64() - 1) * s)
		}
		return out
	}
	w, b := rnd((in+H)*4*H, 0.5), rnd(4*H, 0.5)
	x, h0, c0 := rnd(n*in, 1), rnd(n*H, 1), rnd(n*H, 1)
	wh, wc := rnd(n*H, 1), rnd(n*H, 1) // loss weights
	for _, tc := range []struct {
		name string
		mask []float32
	}{{"all rows", nil}, {"padded row", []float32{1, 0, 1}}} {
		t.Run(tc.name, func(t *testing.T) {
			loss := func() float64 {
				h, c, _ := lstmForward(w, b, in, H, x, h0, c0, tc.mask)
				var s float64
				for i := range h {
					s += float64(wh[i]*h[i] + wc[i]*c[i])
				}
				return s
			}
			_, _, st := lstmForward(w, b, in, H, x, h0, c0, tc.mask)
			dW, dB := make([]float32, len(w)), make([]float32, len(b))
			dx, dh, dc := st.backward(w, dW, dB, wh, wc)
			fdCheck(t, "W", w, dW, loss, 1)
			fdCheck(t, "b", b, dB, loss, 1)
			fdCheck(t, "x", x, dx, loss, 1)
			fdCheck(t, "h_prev", h0, dh, loss, 1)
			fdCheck(t, "c_prev", c0, dc, loss, 1)
		})
	}
}

// snapshotGrads copies p's gradients, which the finite-difference checks'
// loss evaluations overwrite.
func snapshotGrads(p *Params) [][]float32 {
	grads := make([][]float32, len(p.Grads))
	for i := range grads {
		grads[i] = append([]float32(nil), p.Grads[i]...)
	}
	return grads
}

// tinyVocab has source tokens a b c x and target tokens a b y: x is only
// copyable, y only generable.
func tinyVocab() *Vocab {
	v := &Vocab{Source: append(append([]string(nil), specials...), "a", "b", "c", "x"),
		Target: append(append([]string(nil), specials...), "a", "b", "y")}
	v.index()
	return v
}

func tinyLSTM(t *testing.T, variant string, dropout float64) (*LSTM, *Batch) {
	t.Helper()
	return tinyLSTMWith(t, variant, dropout, func(*Config) {})
}

// tinyLSTMWith is tinyLSTM with edit applied to its config.
func tinyLSTMWith(t *testing.T, variant string, dropout float64, edit func(*Config)) (*LSTM, *Batch) {
	t.Helper()
	v := tinyVocab()
	cfg := DefaultConfig()
	cfg.Variant, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Dropout = variant, 4, 2, 1, dropout
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	edit(&cfg)
	m, err := NewLSTM(cfg, 3, v)
	if err != nil {
		t.Fatal(err)
	}
	V := len(v.Target)
	if variant != "lstm-copy" {
		V = UnkID - 2 // no copy ids: the copied tokens are UNK targets
	}
	ex := []Example{
		{Src: []int{4, 5, 7}, Tgt: []int{4, V + 2, 6, EOSID}},
		{Src: []int{7, 6}, Tgt: []int{V + 0, 5, EOSID}},
	}
	rows := []*Example{&ex[0], &ex[1]}
	return m, MakeBatch(rows, 3, 1) // one all-padding row
}

// repeatedSourceBatch is tinyLSTM's batch shape with source tokens that
// occur twice: the copy target of x (id 7, only copyable) names its first
// position, and its probability is the attention on both positions; a
// (id 4, also a target token) repeats too.
func repeatedSourceBatch(m *LSTM) *Batch {
	V := m.Cfg.TgtVocab
	ex := []Example{
		{Src: []int{7, 5, 7}, Tgt: []int{V + 0, 5, V + 0, EOSID}},
		{Src: []int{4, 6, 4}, Tgt: []int{4, 6, EOSID}},
	}
	return MakeBatch([]*Example{&ex[0], &ex[1]}, 3, 1)
}

// amplify scales every parameter of a tiny model by 4, after giving the
// attention bias non-zero values: at initialisation the attention is
// nearly uniform and the gradients of attn.* are below 1e-4, under the
// finite-difference check's absolute tolerance (a dropped attn.b gradient
// passed it). Scaled by 10, the gates saturate and the check fails for
// want of precision.
func amplify(m *LSTM) {
	p := m.Params()
	for i, n := range p.Names {
		for j, w := range p.Data(i) {
			if n == "attn.b" {
				w = float32(j%3-1) * 0.7
			}
			p.Data(i)[j] = 4 * w
		}
	}
}

func TestLSTMGradient(t *testing.T) {
	for _, tc := range []struct {
		variant  string
		sharp    bool // amplify, and require attn.* gradients above 1e-3
		repeated bool // repeatedSourceBatch: a copy target at two positions
	}{
		{"lstm-attention", false, false}, {"lstm-copy", false, false},
		{"lstm-attention", true, false}, {"lstm-copy", true, false},
		{"lstm-copy", true, true},
	} {
		variant := tc.variant
		name := variant
		if tc.sharp {
			name += "/amplified"
		}
		if tc.repeated {
			name += "/repeated source"
		}
		t.Run(name, func(t *testing.T) {
			m, bt := tinyLSTM(t, variant, 0)
			if tc.repeated {
				bt = repeatedSourceBatch(m)
			}
			if tc.sharp {
				amplify(m)
			}
			eps := 0.1
			loss := func() float64 {
				l, err := m.Loss(bt, false, eps, 0)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			if _, err := m.Loss(bt, true, eps, 1); err != nil {
				t.Fatal(err)
			}
			p := m.Params()
			grads := snapshotGrads(p)
			for i, n := range p.Names {
				fdCheck(t, n, p.Data(i), grads[i], loss, 1+len(grads[i])/40)
				if tc.sharp && strings.HasPrefix(n, "attn.") {
					big := 0.0
					for _, g := range grads[i] {
						big = max(big, math.Abs(float64(g)))
					}
					if big < 1e-3 {
						t.Errorf("%s: largest gradient %.2g, too small for the check to see a wrong one", n, big)
					}
				}
			}
		})
	}
}

// TestLSTMDropoutGradient checks the backward pass through the BiLSTM
// model's dropout masks, fixed by the step, and lstm-copy's word dropout,
// which embeds some source tokens as <unk>: TestLSTMGradient runs without
// dropout, where the embedded ids are the source ids.
func TestLSTMDropoutGradient(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy"} {
		t.Run(variant, func(t *testing.T) {
			m, bt := tinyLSTM(t, variant, 0.3)
			loss := func() float64 {
				l, err := m.Loss(bt, true, 0.1, 1) // step 1 drops a source token of lstm-copy
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			loss()
			p := m.Params()
			grads := snapshotGrads(p)
			for i, n := range p.Names {
				fdCheck(t, n, p.Data(i), grads[i], loss, 1+len(grads[i])/40)
			}
			if variant != "lstm-copy" {
				return
			}
			// The batch has no <unk>: its embedding gets a gradient only
			// from word dropout, large enough for the check to see.
			i, _ := p.Index("src_emb")
			H := m.Cfg.Dim
			big := 0.0
			for _, g := range grads[i][UnkID*H : (UnkID+1)*H] {
				big = max(big, math.Abs(float64(g)))
			}
			if big < 5e-3 {
				t.Errorf("<unk> embedding: largest gradient %.2g; word dropout did not reach the check", big)
			}
		})
	}
}

func TestLSTMDropoutDeterministic(t *testing.T) {
	m, bt := tinyLSTM(t, "lstm-copy", 0.4)
	a, _ := m.Loss(bt, true, 0, 5)
	b, _ := m.Loss(bt, true, 0, 5)
	c, _ := m.Loss(bt, true, 0, 6)
	if a != b {
		t.Errorf("same step gave losses %v and %v", a, b)
	}
	if a == c {
		t.Errorf("steps 5 and 6 gave the same loss %v: dropout masks do not change", a)
	}
}

// TestLSTMLogitsMatchLoss checks that the decoding path (Encode, Logits)
// computes the same distribution as the training path, and the training
// loss's label smoothing: (1-eps) on the target and eps spread over the V
// target ids for lstm-attention, none for lstm-copy.
func TestLSTMLogitsMatchLoss(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy", "lstm-copy/transformer", "lstm-copy/repeated source"} {
		t.Run(variant, func(t *testing.T) {
			var m *LSTM
			var bt *Batch
			if name, ok := strings.CutSuffix(variant, "/transformer"); ok {
				m, bt = tinyTEncLSTM(t, name, 0)
			} else if name, ok := strings.CutSuffix(variant, "/repeated source"); ok {
				m, _ = tinyLSTM(t, name, 0)
				bt = repeatedSourceBatch(m)
			} else {
				m, bt = tinyLSTM(t, variant, 0)
			}
			nll, uniform, n := teacherForcedLosses(t, m, bt, !m.Copy) // lstm-copy's rows hold impossible ids
			for _, eps := range []float64{0, 0.1} {
				got := nll / float64(n)
				if !m.Copy {
					got = ((1-eps)*nll + eps*uniform) / float64(n)
				}
				want, _ := m.Loss(bt, false, eps, 0)
				if math.Abs(got-want) > 1e-4 {
					t.Errorf("smoothing %g: decoding loss %.6f, training loss %.6f", eps, got, want)
				}
			}
		})
	}
}

func TestNewLSTMErrors(t *testing.T) {
	v := tinyVocab()
	base := DefaultConfig()
	base.Dim, base.Layers, base.Heads = 4, 1, 1
	base.SrcVocab, base.TgtVocab = len(v.Source), len(v.Target)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		v    *Vocab
	}{
		{"transformer variant", func(c *Config) { c.Variant = "transformer" }, v},
		{"copy without vocabulary", func(c *Config) { c.Variant = "lstm-copy" }, nil},
		{"vocab sizes unset", func(c *Config) { c.Variant = "lstm-attention"; c.SrcVocab = 0 }, v},
		{"bad dropout", func(c *Config) { c.Variant = "lstm-attention"; c.Dropout = 1 }, v},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			if _, err := NewLSTM(c, 1, tc.v); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// TestLSTMDecodeCache: logits from cached decoder states, with rows
// reordered as beam search does, equal a rerun over the whole prefix.
func TestLSTMDecodeCache(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy", "lstm-copy/transformer"} {
		t.Run(variant, func(t *testing.T) {
			var m *LSTM
			var bt *Batch
			if name, ok := strings.CutSuffix(variant, "/transformer"); ok {
				m, bt = tinyTEncLSTM(t, name, 0)
			} else {
				m, bt = tinyLSTM(t, variant, 0)
			}
			one, err := m.Encode(bt.Src[:bt.S], 1, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			mem := one.Repeat(2)
			const T = 4
			first := []int{StartID, 4, 0, 0, StartID, 5, 0, 0}
			second := []int{StartID, 5, 6, 0, StartID, 4, 4, 0} // rows swapped, one token more
			for pos := 0; pos < 2; pos++ {
				if _, err := m.Logits(mem, first, T, pos); err != nil {
					t.Fatal(err)
				}
			}
			cached, ok := m.stepLogits(mem, second, T, 2)
			if !ok {
				t.Fatal("the cached path was not taken")
			}
			m.cache = nil
			fresh, err := m.Logits(mem, second, T, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i := range fresh {
				if math.Abs(float64(fresh[i]-cached[i])) > 1e-4 {
					t.Fatalf("logit %d: cached %v, rerun %v", i, cached[i], fresh[i])
				}
			}
		})
	}
}
