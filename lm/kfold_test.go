package lm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models/gpt2"
)

// trainers makes a fresh model with newModel for each fold, on be.
func trainers(be engine.Backend, newModel func() (*gpt2.Model, error)) func() (*gpt2.Trainer, error) {
	return func() (*gpt2.Trainer, error) {
		m, err := newModel()
		if err != nil {
			return nil, err
		}
		return gpt2.NewTrainer(m, be, gpt2.AdamW())
	}
}

// TestScoreFolds: the k-fold loop on the engine's CPU backend gives the
// same scores for a seed, lowers the held-out loss of repetitive examples
// below the untrained model's, and closes every fold's model (no engine
// buffer is left). The training steps themselves are checked against
// the TapeMachine in package models (TestGPT2TrainerMatchesTapeMachine).
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
	newModel := func() (*gpt2.Model, error) {
		return gpt2.New(gpt2.Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: 50257, LayerNormEpsilon: 1e-5}, 1)
	}
	be := &engine.CPU{BLAS: true}
	run := func() []Score {
		s, err := ScoreFolds(context.Background(), trainers(be, newModel), ex, sc, fc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := be.Live(); n != 0 {
			t.Fatalf("%d engine buffers left after the folds", n)
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
	m, _ := newModel()
	e, err := gpt2.NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	untrained, err := ScoreAll(context.Background(), e, ex, sc, nil)
	e.Close()
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
	if _, err := ScoreFolds(context.Background(), trainers(be, newModel), ex, sc, bad, nil); err == nil {
		t.Error("1 fold: no error")
	}
	t.Run("model error", func(t *testing.T) {
		_, err := ScoreFolds(context.Background(), func() (*gpt2.Trainer, error) { return nil, fmt.Errorf("no device") }, ex, sc, fc, nil)
		if err == nil || !strings.Contains(err.Error(), "no device") {
			t.Errorf("error %v", err)
		}
	})
}
