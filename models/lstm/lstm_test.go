package lstm

import (
	"testing"

	"compbench/models"
)

// tinyVocab has source tokens a b c x and target tokens a b y: x is only
// copyable, y only generable.
func tinyVocab() *models.Vocab {
	return models.NewVocab(append(specialTokens(), "a", "b", "c", "x"), append(specialTokens(), "a", "b", "y"))
}

// specialTokens is a new slice of the special tokens, in id order.
func specialTokens() []string { return models.BuildVocab(nil).Source }

func tinyLSTM(t *testing.T, variant string, dropout float64) (*Model, *models.Batch) {
	t.Helper()
	return tinyLSTMWith(t, variant, dropout, func(*models.Config) {})
}

// tinyLSTMWith is tinyLSTM with edit applied to its config.
func tinyLSTMWith(t *testing.T, variant string, dropout float64, edit func(*models.Config)) (*Model, *models.Batch) {
	t.Helper()
	v := tinyVocab()
	cfg := models.DefaultConfig()
	cfg.Variant, cfg.Dim, cfg.Layers, cfg.Heads, cfg.Dropout = variant, 4, 2, 1, dropout
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	edit(&cfg)
	m, err := New(cfg, 3, v)
	if err != nil {
		t.Fatal(err)
	}
	V := len(v.Target)
	if variant != "lstm-copy" {
		V = models.UnkID - 2 // no copy ids: the copied tokens are UNK targets
	}
	ex := []models.Example{
		{Src: []int{4, 5, 7}, Tgt: []int{4, V + 2, 6, models.EOSID}},
		{Src: []int{7, 6}, Tgt: []int{V + 0, 5, models.EOSID}},
	}
	rows := []*models.Example{&ex[0], &ex[1]}
	return m, models.MakeBatch(rows, 3, 1) // one all-padding row
}

// repeatedSourceBatch is tinyLSTM's batch shape with source tokens that
// occur twice: the copy target of x (id 7, only copyable) names its first
// position, and its probability is the attention on both positions; a
// (id 4, also a target token) repeats too.
func repeatedSourceBatch(m *Model) *models.Batch {
	V := m.Cfg.TgtVocab
	ex := []models.Example{
		{Src: []int{7, 5, 7}, Tgt: []int{V + 0, 5, V + 0, models.EOSID}},
		{Src: []int{4, 6, 4}, Tgt: []int{4, 6, models.EOSID}},
	}
	return models.MakeBatch([]*models.Example{&ex[0], &ex[1]}, 3, 1)
}

// amplify scales every parameter of a tiny model by 4, after giving the
// attention bias non-zero values: at initialisation the attention is
// nearly uniform and the gradients of attn.* are too small for a
// finite-difference check to see an error in them.
func amplify(m *Model) {
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
	base := models.DefaultConfig()
	base.Dim, base.Layers, base.Heads = 4, 1, 1
	base.SrcVocab, base.TgtVocab = len(v.Source), len(v.Target)
	for _, tc := range []struct {
		name string
		edit func(*models.Config)
		v    *models.Vocab
	}{
		{"transformer variant", func(c *models.Config) { c.Variant = "transformer" }, v},
		{"copy without vocabulary", func(c *models.Config) { c.Variant = "lstm-copy" }, nil},
		{"vocab sizes unset", func(c *models.Config) { c.Variant = "lstm-attention"; c.SrcVocab = 0 }, v},
		{"bad dropout", func(c *models.Config) { c.Variant = "lstm-attention"; c.Dropout = 1 }, v},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.edit(&c)
			if _, err := New(c, 1, tc.v); err == nil {
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
