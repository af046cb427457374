package lm

import (
	"context"
	"fmt"
	"math"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models/gpt2"
)

func TestCompactVocab(t *testing.T) {
	tok, _ := loadFixture(t)
	var recs []data.Record
	for i := 0; i < 12; i++ {
		recs = append(recs, data.Record{ID: fmt.Sprint("r", i), Input: fmt.Sprintf("walk %d times and jump left", i%4)})
	}
	ex, _, err := EncodeRecords(tok, recs, DefaultScoreConfig(), 32)
	if err != nil {
		t.Fatal(err)
	}
	v := NewCompactVocab(ex, tok.EOS())
	cex, err := v.Compact(ex)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("round trip", func(t *testing.T) {
		for i := range ex {
			if cex[i].ID != ex[i].ID || cex[i].First != ex[i].First || len(cex[i].Ids) != len(ex[i].Ids) {
				t.Fatalf("record %d: %+v from %+v", i, cex[i], ex[i])
			}
			for k, c := range cex[i].Ids {
				if c < 0 || c >= v.Size() || v.Original(c) != ex[i].Ids[k] {
					t.Errorf("record %d token %d: compact %d maps back to %d, want %d", i, k, c, v.Original(c), ex[i].Ids[k])
				}
			}
		}
	})
	t.Run("end of text is the last id", func(t *testing.T) {
		if v.Original(v.Size()-1) != tok.EOS() {
			t.Errorf("last compact id is BPE %d, want <|endoftext|> %d", v.Original(v.Size()-1), tok.EOS())
		}
		if v.Size() > 20 {
			t.Errorf("%d compact ids for a handful of words", v.Size())
		}
	})
	t.Run("unknown id", func(t *testing.T) {
		if _, err := v.Compact([]Encoded{{ID: "x", Ids: []int{tok.EOS(), 31337}, First: 1}}); err == nil {
			t.Error("id outside the vocabulary: no error")
		}
	})
	t.Run("from-scratch scores", func(t *testing.T) {
		newModel := func() (*gpt2.Model, error) {
			return gpt2.New(gpt2.Config{NLayer: 1, NHead: 2, NEmbd: 16, NPositions: 32, VocabSize: v.Size(), LayerNormEpsilon: 1e-5}, 3)
		}
		fc := FoldConfig{Folds: 3, LR: 1e-2, Batch: 4, MaxSteps: 4, EvalEvery: 2, ValidFrac: 0.2, Seed: 5}
		run := func() []Score {
			s, err := ScoreFolds(context.Background(), trainers(&engine.CPU{BLAS: true}, newModel), cex, DefaultScoreConfig(), fc, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		a, b := run(), run()
		for i := range a {
			if math.IsNaN(a[i].Score) || math.IsInf(a[i].Score, 0) || a[i].Score >= 0 || a[i].Tokens != len(ex[i].Ids)-ex[i].First {
				t.Errorf("record %d: %+v", i, a[i])
			}
			if a[i].Score != b[i].Score {
				t.Errorf("record %d: %g then %g with the same seed", i, a[i].Score, b[i].Score)
			}
		}
	})
}
