package transformer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/models"
)

func tinyRecords() []data.Record {
	return []data.Record{
		{ID: "a", Input: "jump twice", Output: "JUMP JUMP", Parts: []string{"JUMP JUMP"}},
		{ID: "b", Input: "walk and jump", Output: "WALK JUMP", Parts: []string{"WALK", "JUMP"}},
		{ID: "c", Input: "walk", Output: "WALK", Parts: []string{"WALK"}},
	}
}

func tinyModel(t testing.TB, variant string, recs []data.Record) (*Model, *models.Vocab, []models.Example) {
	t.Helper()
	v := models.BuildVocab(recs)
	cfg := models.DefaultConfig()
	// "universal+act": the Universal Transformer with adaptive computation time.
	name, act := strings.CutSuffix(variant, "+act")
	if err := cfg.ApplyVariant(name); err != nil {
		t.Fatal(err)
	}
	cfg.ACT = act
	cfg.Layers, cfg.Heads, cfg.Dim, cfg.MLPDim, cfg.Dropout = 1, 2, 8, 16, 0
	cfg.RelBuckets, cfg.RelMaxDistance = 4, 8
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, err := models.Encode(v, recs, models.EncodeOptions{Separators: cfg.Separators, MaxSrc: 16, MaxTgt: 16})
	if err != nil {
		t.Fatal(err)
	}
	return m, v, ex
}

// TestModelGradient compares the backward pass of the whole model with
// central finite differences on a few weights of every parameter.
func TestModelGradient(t *testing.T) {
	for _, variant := range []string{"transformer", "sep-to-last", "universal", "universal+act"} {
		t.Run(variant, func(t *testing.T) {
			m, _, ex := tinyModel(t, variant, tinyRecords())
			rows := []*models.Example{&ex[0], &ex[1], &ex[2]}
			bt := models.MakeBatch(rows, 4, 4)
			if _, err := m.Loss(bt, true, 0.1, 1); err != nil {
				t.Fatal(err)
			}
			p := m.Params()
			grads := snapshotGrads(p)
			const h = 2e-3
			for i, name := range p.Names {
				w := p.Data(i)
				for _, k := range []int{0, len(w) / 2, len(w) - 1} {
					old := w[k]
					// The training graph (no dropout in tinyModel): its loss
					// includes ACT's ponder cost, the evaluation loss does not.
					w[k] = old + h
					lp, err := m.Loss(bt, true, 0.1, 1)
					if err != nil {
						t.Fatal(err)
					}
					w[k] = old - h
					lm, _ := m.Loss(bt, true, 0.1, 1)
					w[k] = old
					num := (lp - lm) / (2 * h)
					if d := math.Abs(num - float64(grads[i][k])); d > 2e-3+0.05*math.Abs(num) {
						t.Errorf("%s[%d]: backward %.5f, finite difference %.5f", name, k, grads[i][k], num)
					}
				}
			}
		})
	}
}

// TestTransformerLossMatchesLogits: the training loss is the decoding
// path's cross-entropy with label smoothing eps spread over all V target
// ids. The gradient check differentiates whatever loss the graph computes,
// so a smoothing left out of it passed there.
func TestTransformerLossMatchesLogits(t *testing.T) {
	for _, variant := range []string{"transformer", "relative", "sep-to-last"} {
		t.Run(variant, func(t *testing.T) {
			m, _, ex := tinyModel(t, variant, tinyRecords())
			bt := models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 4, 4) // a padding row
			nll, uniform, n := teacherForcedLosses(t, m, bt, true)
			for _, eps := range []float64{0, 0.1} {
				want, err := m.Loss(bt, false, eps, 0)
				if err != nil {
					t.Fatal(err)
				}
				if got := ((1-eps)*nll + eps*uniform) / float64(n); math.Abs(got-want) > 1e-4 {
					t.Errorf("smoothing %g: decoding loss %.6f, training loss %.6f", eps, got, want)
				}
			}
		})
	}
}

// TestGraphEviction: dropping and rebuilding graphs changes nothing, dropout
// masks included.
func TestGraphEviction(t *testing.T) {
	a, _, ex := tinyModel(t, "relative-sep", tinyRecords())
	b, _, _ := tinyModel(t, "relative-sep", tinyRecords())
	a.Cfg.Dropout, b.Cfg.Dropout = 0.3, 0.3
	b.MaxGraphs = 1
	batches := []*models.Batch{models.MakeBatch([]*models.Example{&ex[0]}, 2, 4), models.MakeBatch([]*models.Example{&ex[1], &ex[2]}, 2, 8)}
	for step := 1; step <= 4; step++ {
		bt := batches[step%2]
		la, err := a.Loss(bt, true, 0, step)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.Loss(bt, true, 0, step)
		if err != nil {
			t.Fatal(err)
		}
		if la != lb {
			t.Errorf("step %d: loss %v with all graphs kept, %v with one", step, la, lb)
		}
	}
	if len(b.graphs) != 1 {
		t.Errorf("%d graphs kept, want 1", len(b.graphs))
	}
}

// snapshotGrads copies p's gradients, which later loss evaluations
// overwrite.
func snapshotGrads(p *models.Params) [][]float32 {
	grads := make([][]float32, len(p.Grads))
	for i := range grads {
		grads[i] = append([]float32(nil), p.Grads[i]...)
	}
	return grads
}

// TestUniversalOneStep: a Universal Transformer of one step whose step
// embeddings are zero computes what a 1-layer Transformer with the same
// weights computes (universal.go); its weights for a seed are that
// Transformer's followed by the step embeddings, and more steps share them.
func TestUniversalOneStep(t *testing.T) {
	tr, _, ex := tinyModel(t, "transformer", tinyRecords())
	bt := models.MakeBatch([]*models.Example{&ex[0], &ex[1], &ex[2]}, 4, 4) // a padding row
	for _, steps := range []int{1, 3} {
		t.Run(fmt.Sprintf("steps=%d", steps), func(t *testing.T) {
			cfg := asRun(tr.Cfg)
			if err := cfg.ApplyVariant(models.Universal); err != nil {
				t.Fatal(err)
			}
			if cfg.UTSteps != models.DefaultUTSteps {
				t.Fatalf("universal's default steps %d, want %d", cfg.UTSteps, models.DefaultUTSteps)
			}
			cfg.UTSteps = steps
			ut, err := New(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			p, q := tr.Params(), ut.Params()
			if len(q.Names) != len(p.Names)+2*steps {
				t.Fatalf("%d parameters, want the Transformer's %d and %d step embeddings: %v", len(q.Names), len(p.Names), 2*steps, q.Names)
			}
			for i, name := range p.Names {
				if q.Names[i] != name || !slices.Equal(q.Data(i), p.Data(i)) {
					t.Fatalf("parameter %d: %s differs from the Transformer's %s", i, q.Names[i], name)
				}
			}
			for i := len(p.Names); i < len(q.Names); i++ {
				clear(q.Data(i))
			}
			want, err := tr.Loss(bt, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ut.Loss(bt, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if steps == 1 && got != want {
				t.Errorf("one step: loss %v, the 1-layer Transformer's %v", got, want)
			}
			if steps > 1 && got == want {
				t.Errorf("%d steps: loss %v equals one layer's", steps, got)
			}
		})
	}
}

// asRun is a run configuration holding c's fields (the reverse of
// ConfigOf), for tests that build a variant of a model.
func asRun(c Config) models.Config {
	r := models.DefaultConfig()
	r.Variant, r.Layers, r.Heads, r.Dim, r.MLPDim, r.Dropout = c.Variant, c.Layers, c.Heads, c.Dim, c.MLPDim, c.Dropout
	r.Relative, r.RelBuckets, r.RelMaxDistance, r.Separators, r.Mask = c.Relative, c.RelBuckets, c.RelMaxDistance, c.Separators, c.Mask
	r.MaxSrcLen, r.MaxTgtLen, r.SrcVocab, r.TgtVocab = c.MaxSrcLen, c.MaxTgtLen, c.SrcVocab, c.TgtVocab
	r.IOEncoder, r.UTSteps, r.ACT = c.IOEncoder, c.UTSteps, c.ACT
	return r
}
