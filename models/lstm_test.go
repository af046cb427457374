package models

import (
	"testing"
)

// snapshotGrads copies p's gradients, which later loss evaluations
// overwrite.
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
// nearly uniform and the gradients of attn.* are too small for a
// finite-difference check to see an error in them.
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

// TestLSTMDropoutDeterministic: the training loss depends on the step's
// dropout masks (and lstm-copy's word dropout) and on nothing else.
func TestLSTMDropoutDeterministic(t *testing.T) {
	m, bt := tinyLSTM(t, "lstm-copy", 0.4)
	e := cpuEngineLSTM(t, m)
	a, _ := e.Loss(bt, true, 0, 5)
	b, _ := e.Loss(bt, true, 0, 5)
	c, _ := e.Loss(bt, true, 0, 6)
	if a != b {
		t.Errorf("same step gave losses %v and %v", a, b)
	}
	if a == c {
		t.Errorf("steps 5 and 6 gave the same loss %v: dropout masks do not change", a)
	}
}
