package lm

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
)

func TestScoreFolds(t *testing.T) {
	tok, _ := loadFixture(t)
	var recs []data.Record
	for i := 0; i < 15; i++ {
		recs = append(recs, data.Record{ID: fmt.Sprint("r", i), Input: fmt.Sprintf("jump %d times and walk", i%5)})
	}
	sc := DefaultScoreConfig()
	ex, _, err := EncodeRecords(tok, recs, sc, 32)
	if err != nil {
		t.Fatal(err)
	}
	fc := FoldConfig{Folds: 3, LR: 1e-2, Batch: 4, MaxSteps: 3, EvalEvery: 3, ValidFrac: 0.2, Seed: 7}
	newModel := func() (*models.GPT2, error) {
		return models.NewGPT2(models.GPT2Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: 50257, LayerNormEpsilon: 1e-5}, 1)
	}
	run := func() []Score {
		s, err := ScoreFolds(context.Background(), newModel, ex, sc, fc, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := run(), run()
	for i := range a {
		if a[i].ID != recs[i].ID || a[i].Tokens == 0 || a[i].Score >= 0 {
			t.Errorf("record %d: %+v", i, a[i])
		}
		if a[i].Score != b[i].Score {
			t.Errorf("record %d: %g then %g with the same seed", i, a[i].Score, b[i].Score)
		}
	}
	// Training lowers the held-out loss of these repetitive examples below
	// the untrained model's.
	m, _ := newModel()
	untrained, err := ScoreAll(context.Background(), m, ex, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sa, su float64
	for i := range a {
		sa += a[i].Score
		su += untrained[i].Score
	}
	if !(sa > su) {
		t.Errorf("fine-tuned total log-prob %g not above untrained %g", sa, su)
	}
	bad := fc
	bad.Folds = 1
	if _, err := ScoreFolds(context.Background(), newModel, ex, sc, bad, nil); err == nil {
		t.Error("1 fold: no error")
	}
}

// closeCounter counts the folds' Close calls.
type closeCounter struct {
	FoldModel
	n *int
}

func (c closeCounter) Close() { *c.n++; c.FoldModel.Close() }

// TestScoreFoldsOnEngine: the k-fold loop on an engine backend (weights
// and AdamW moments in its memory) gives the host loop's scores: within
// 1e-5 relative (the engine sums bias gradients of more than 64 rows in
// chunks, docs/engine.md), the same for a seed, and every fold's model is
// closed.
func TestScoreFoldsOnEngine(t *testing.T) {
	tok, _ := loadFixture(t)
	var recs []data.Record
	for i := 0; i < 24; i++ {
		recs = append(recs, data.Record{ID: fmt.Sprint("r", i), Input: fmt.Sprintf("jump %d times and walk left %d", i%5, i%3)})
	}
	sc := DefaultScoreConfig()
	ex, _, err := EncodeRecords(tok, recs, sc, 32)
	if err != nil {
		t.Fatal(err)
	}
	v := NewCompactVocab(ex, tok.EOS())
	if ex, err = v.Compact(ex); err != nil {
		t.Fatal(err)
	}
	cfg := models.GPT2Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: v.Size(), LayerNormEpsilon: 1e-5}
	fc := FoldConfig{Folds: 2, LR: 1e-2, Batch: 8, MaxSteps: 6, EvalEvery: 2, ValidFrac: 0.2, Seed: 3}
	host, err := ScoreFolds(context.Background(), func() (*models.GPT2, error) { return models.NewGPT2(cfg, 1) }, ex, sc, fc, nil)
	if err != nil {
		t.Fatal(err)
	}
	onEngine := func() ([]Score, int) {
		closed := 0
		s, err := ScoreFoldsWith(context.Background(), func() (FoldModel, error) {
			m, err := models.NewGPT2(cfg, 1)
			if err != nil {
				return nil, err
			}
			tr, err := models.NewGPT2Trainer(m, &engine.CPU{BLAS: true}, models.GPT2AdamW())
			return closeCounter{tr, &closed}, err
		}, ex, sc, fc, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, closed
	}
	a, closed := onEngine()
	b, _ := onEngine()
	if closed != fc.Folds {
		t.Errorf("%d models closed, want %d", closed, fc.Folds)
	}
	var worst float64
	for i := range host {
		if a[i].ID != host[i].ID || a[i].Tokens != host[i].Tokens {
			t.Fatalf("record %d: engine %+v, host %+v", i, a[i], host[i])
		}
		if a[i].Score != b[i].Score {
			t.Errorf("record %d: %g then %g with the same seed", i, a[i].Score, b[i].Score)
		}
		worst = max(worst, math.Abs(a[i].Score-host[i].Score)/math.Abs(host[i].Score))
	}
	if worst > 1e-5 {
		t.Errorf("engine scores differ from the host's by up to %g relative", worst)
	}
	t.Logf("engine scores within %g relative of the host's", worst)
	t.Run("model error", func(t *testing.T) {
		_, err := ScoreFoldsWith(context.Background(), func() (FoldModel, error) { return nil, fmt.Errorf("no device") }, ex, sc, fc, nil)
		if err == nil || !strings.Contains(err.Error(), "no device") {
			t.Errorf("error %v", err)
		}
	})
}
