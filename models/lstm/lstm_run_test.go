package lstm_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/models/lstm"
	"compbench/train"
)

func smallCopyRun(t *testing.T, variant string, steps int, dir string, resume bool) {
	t.Helper()
	task := copyTask{trainN: 64, testN: 8, vocab: 20, minLen: 2, maxLen: 5}
	rng := data.NewRand(5)
	tr, dev := task.records(rng, "t", task.trainN), task.records(rng, "t", task.testN)
	name, tenc := strings.CutSuffix(variant, "/transformer")
	cfg := copyConfig(name, false)
	cfg.Model.Dim, cfg.Model.Dropout = 8, 0.3
	if tenc {
		cfg.Model.Encoder, cfg.Model.EncoderHeads, cfg.Model.MLPDim = models.EncoderTransformer, 2, 16
	}
	cfg.Steps, cfg.Batch, cfg.EvalEvery = steps, 8, 5
	if _, err := train.Train(context.Background(), cfg, train.Options{Dir: dir, Train: tr, Dev: dev, Resume: resume}); err != nil {
		t.Fatal(err)
	}
}

// openBound opens the run in dir and binds it to be (nil: the CPU).
func openBound(t *testing.T, dir string, be engine.Backend) *train.Run {
	t.Helper()
	r, err := train.OpenRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	release, err := r.UseBackend(be)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return r
}

// TestLSTMResume: stopping and resuming gives the weights and moments of an
// uninterrupted run (dropout masks and batches depend only on seed and
// step), and a reopened run computes the same loss.
func TestLSTMResume(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy", "lstm-copy/transformer"} {
		t.Run(variant, func(t *testing.T) {
			full, part := t.TempDir(), t.TempDir()
			smallCopyRun(t, variant, 20, full, false)
			smallCopyRun(t, variant, 10, part, false)
			smallCopyRun(t, variant, 20, part, true)
			for _, f := range []string{train.ModelFile, train.OptimFile} {
				a, _ := os.ReadFile(filepath.Join(full, f))
				b, _ := os.ReadFile(filepath.Join(part, f))
				if len(a) == 0 || !bytes.Equal(a, b) {
					t.Errorf("%s differs between the resumed and the uninterrupted run", f)
				}
			}
			r, err := train.OpenRun(full, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := r.Def.(*lstm.Model); !ok {
				t.Fatalf("OpenRun made a %T", r.Def)
			}
			if _, tenc := strings.CutSuffix(variant, "/transformer"); tenc != (r.Config.Model.Encoder == models.EncoderTransformer) {
				t.Errorf("reopened run has encoder %q", r.Config.Model.Encoder)
			}
		})
	}
}

// TestLSTMBadInput: corrupt batches and checkpoints of another model give
// errors, not panics.
func TestLSTMBadInput(t *testing.T) {
	dir := t.TempDir()
	smallCopyRun(t, "lstm-copy", 5, dir, false)
	r := openBound(t, dir, nil)
	ex := models.Example{Src: []int{4, 1 << 20}, Tgt: []int{4, models.EOSID}}
	if _, err := r.Model.Loss(models.MakeBatch([]*models.Example{&ex}, 1, 1), false, 0, 0); err == nil {
		t.Error("source id outside the vocabulary: no error")
	}
	mem, err := r.Model.Encode([]int{4, 5}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Model.Logits(mem, []int{models.StartID}, 1, 3); err == nil {
		t.Error("position beyond the decoder inputs: no error")
	}
	// A Transformer checkpoint does not load into the LSTM.
	cfg := train.DefaultConfig()
	cfg.Model = r.Config.Model
	if err := cfg.Model.ApplyVariant("transformer"); err != nil {
		t.Fatal(err)
	}
	cfg.Model.Dim, cfg.Model.Heads, cfg.Model.MLPDim, cfg.Model.Layers = 8, 2, 8, 1
	tf, err := train.NewModel(cfg.Model, 1, r.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	err = train.LoadWeights(filepath.Join(dir, train.ModelFile), tf.Params())
	if err == nil || !strings.Contains(err.Error(), "another model") {
		t.Errorf("loading an LSTM checkpoint into a Transformer: %v", err)
	}
}

// TestLSTMCopyBeam: beam search over the extended vocabulary gives ids
// that are target ids or source positions, best first, for tokens the run
// has never seen.
func TestLSTMCopyBeam(t *testing.T) {
	dir := t.TempDir()
	smallCopyRun(t, "lstm-copy", 30, dir, false)
	r := openBound(t, dir, nil)
	task := copyTask{vocab: 20, minLen: 2, maxLen: 5}
	recs := task.records(data.NewRand(9), "u", 6) // tokens unknown to the run
	ex, _, err := models.Encode(r.Vocab, recs, models.EncodeOptions{MaxSrc: 16, MaxTgt: 16, Copy: true})
	if err != nil {
		t.Fatal(err)
	}
	V := len(r.Vocab.Target)
	greedy, err := train.Decode(context.Background(), r.Model, ex, train.DecodeOptions{Beam: 1, MaxLen: 8, Batch: 4, Width: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	beam, err := train.Decode(context.Background(), r.Model, ex, train.DecodeOptions{Beam: 3, MaxLen: 8, Batch: 4, Width: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ex {
		hs := beam[i].Hyps
		if len(hs) == 0 {
			t.Fatalf("example %d: no hypotheses", i)
		}
		for k, h := range hs {
			if k > 0 && h.Score > hs[k-1].Score {
				t.Errorf("example %d: hypotheses not sorted: %v", i, hs)
			}
			for _, id := range h.IDs {
				if id < 0 || id >= V+len(ex[i].Src) {
					t.Errorf("example %d: id %d outside target vocabulary %d + source %d", i, id, V, len(ex[i].Src))
				}
			}
		}
		for _, d := range []train.Decoded{greedy[i], beam[i]} {
			if out := r.Vocab.DetokSource(d.Hyps[0].IDs, models.SourceTokens(&recs[i])); strings.Contains(out, "<unk>") {
				t.Errorf("example %d: %q: a copied unseen token printed as <unk>", i, out)
			}
		}
	}
}

// rerunPrefix decodes with a memory the engine did not encode at every
// position, so each step reruns the decoder over the whole prefix.
type rerunPrefix struct{ models.Seq2Seq }

func (r rerunPrefix) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	fresh := *mem
	return r.Seq2Seq.Logits(&fresh, decIn, T, pos)
}

// TestLSTMDecodeRerun: greedy and beam decoding on the engine, which
// steps cached decoder states (gathered by row under beam search), give
// the hypotheses and scores of decoding that reruns the whole prefix at
// every position, for both variants and encoders. On the reference
// backend both compute the same sums in the same order: the scores are
// equal, not close.
func TestLSTMDecodeRerun(t *testing.T) {
	for _, variant := range []string{"lstm-attention", "lstm-copy", "lstm-copy/transformer"} {
		t.Run(variant, func(t *testing.T) {
			dir := t.TempDir()
			smallCopyRun(t, variant, 20, dir, false)
			r := openBound(t, dir, &engine.CPU{})
			task := copyTask{vocab: 20, minLen: 2, maxLen: 5}
			recs := task.records(data.NewRand(3), "t", 6)
			ex, _, err := models.Encode(r.Vocab, recs, models.EncodeOptions{MaxSrc: 16, MaxTgt: 16, Copy: models.Copies(r.Config.Model.Variant)})
			if err != nil {
				t.Fatal(err)
			}
			for _, beam := range []int{1, 3} {
				o := train.DecodeOptions{Beam: beam, MaxLen: 8, Batch: 4, Width: 4}
				a, err := train.Decode(context.Background(), r.Model, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, err := train.Decode(context.Background(), rerunPrefix{r.Model}, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range a {
					if len(a[i].Hyps) != len(b[i].Hyps) {
						t.Fatalf("beam %d, example %d: %d hypotheses, rerun %d", beam, i, len(a[i].Hyps), len(b[i].Hyps))
					}
					for k, ha := range a[i].Hyps {
						if hb := b[i].Hyps[k]; !slices.Equal(ha.IDs, hb.IDs) || ha.Score != hb.Score {
							t.Errorf("beam %d, example %d, hypothesis %d: %v %v, rerun %v %v", beam, i, k, ha.IDs, ha.Score, hb.IDs, hb.Score)
						}
					}
				}
			}
		})
	}
}
