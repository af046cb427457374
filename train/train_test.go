package train

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/models"
	"compbench/models/transformer"
)

func tinyData() []data.Record {
	return []data.Record{
		{ID: "1", Input: "jump", Output: "JUMP", Parts: []string{"JUMP"}},
		{ID: "2", Input: "walk twice", Output: "WALK WALK", Parts: []string{"WALK WALK"}},
		{ID: "3", Input: "jump and walk", Output: "JUMP WALK", Parts: []string{"JUMP", "WALK"}},
		{ID: "4", Input: "walk after jump", Output: "JUMP WALK", Parts: []string{"JUMP", "WALK"}},
		{ID: "5", Input: "run thrice", Output: "RUN RUN RUN", Parts: []string{"RUN RUN RUN"}},
		{ID: "6", Input: "run and jump twice", Output: "RUN JUMP JUMP", Parts: []string{"RUN", "JUMP JUMP"}},
	}
}

func tinyConfig(variant string) Config {
	c := DefaultConfig()
	if err := c.Model.ApplyVariant(variant); err != nil {
		panic(err)
	}
	c.Model.Layers, c.Model.Heads, c.Model.Dim, c.Model.MLPDim = 1, 2, 16, 32
	c.Model.RelBuckets, c.Model.RelMaxDistance = 8, 16
	c.Model.MaxSrcLen, c.Model.MaxTgtLen = 8, 10
	c.Steps, c.Batch, c.BucketWidth, c.LR, c.Warmup = 150, 4, 4, 1e-2, 10
	c.EvalEvery, c.ClipNorm = 50, 1
	return c
}

func train(t *testing.T, cfg Config, o Options) *Result {
	t.Helper()
	if o.Train == nil {
		o.Train, o.Dev = tinyData(), tinyData()
	}
	o.LogEvery = 10
	r, err := Train(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOverfit trains tiny models of several variants to 100% exact match
// on six examples.
func TestOverfit(t *testing.T) {
	for _, v := range []string{"transformer", "relative", "sep-to-last"} {
		t.Run(v, func(t *testing.T) {
			cfg := tinyConfig(v)
			cfg.Model.Dropout = 0
			dir := t.TempDir()
			r := train(t, cfg, Options{Dir: dir})
			// Every step trains at least one target token and at most
			// a full batch of the longest targets; the steps' time is
			// part of the invocation's.
			if r.Tokens < int64(r.Steps) || r.Tokens > int64(r.Steps*cfg.Batch*(cfg.Model.MaxTgtLen+1)) ||
				r.StepTime <= 0 || r.StepTime > r.Elapsed || r.TokensPerSecond() <= 0 {
				t.Errorf("%d tokens in %v of steps (%v in all): implausible for %d steps", r.Tokens, r.StepTime, r.Elapsed, r.Steps)
			}
			if r.DevEM != 1 {
				t.Errorf("dev exact match %.3f after %d steps (loss %.4f), want 1", r.DevEM, r.Steps, r.TrainLoss)
			}
			run, err := OpenRun(dir, true)
			if err != nil {
				t.Fatal(err)
			}
			for _, beam := range []int{1, 3} {
				preds, _, err := Predict(context.Background(), run, tinyData(), DecodeOptions{Beam: beam, Alpha: 0.6, Batch: 4}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if em := ExactMatch(tinyData(), preds); em != 1 {
					t.Errorf("beam %d: exact match %.3f, want 1: %+v", beam, em, preds)
				}
				if beam > 1 && len(preds[0].Beam) != beam {
					t.Errorf("beam %d: %d hypotheses", beam, len(preds[0].Beam))
				}
			}
		})
	}
}

func metricsOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		// tokens/s and the clock are wall-clock dependent.
		if i := strings.Index(l, `,"tokens_per_s"`); i >= 0 {
			l = l[:i]
		}
		if i := strings.Index(l, `,"wall"`); i >= 0 {
			l = l[:i]
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "\n")
}

// TestDeterminism: the same seed gives the same loss curve and weights.
func TestDeterminism(t *testing.T) {
	cfg := tinyConfig("relative-sep")
	cfg.Steps = 30
	a, b := t.TempDir(), t.TempDir()
	train(t, cfg, Options{Dir: a})
	train(t, cfg, Options{Dir: b})
	if ma, mb := metricsOf(t, a), metricsOf(t, b); ma != mb {
		t.Errorf("loss curves differ:\n%s\n---\n%s", ma, mb)
	}
	sameFile(t, filepath.Join(a, ModelFile), filepath.Join(b, ModelFile))
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s and %s differ", a, b)
	}
}

// TestResume: stopping after 20 steps and resuming to 40 gives the same
// weights, byte for byte, as 40 uninterrupted steps (dropout on).
func TestResume(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 40, 20
	full, part := t.TempDir(), t.TempDir()
	train(t, cfg, Options{Dir: full})
	half := cfg
	half.Steps = 20
	train(t, half, Options{Dir: part})
	// A killed run may have logged steps after its last checkpoint.
	f, err := os.OpenFile(filepath.Join(part, MetricsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"loss":9,"step":25}` + "\n")
	f.Close()
	train(t, cfg, Options{Dir: part, Resume: true})
	sameFile(t, filepath.Join(full, ModelFile), filepath.Join(part, ModelFile))
	sameFile(t, filepath.Join(full, OptimFile), filepath.Join(part, OptimFile))
	// Raising the steps is recorded in one line, the rest is the same.
	const resumed = `{"resumed":{"steps":{"from":20,"to":40}},"step":20}` + "\n"
	if !strings.Contains(metricsOf(t, part), resumed) {
		t.Errorf("no %q in metrics.jsonl:\n%s", resumed, metricsOf(t, part))
	}
	if a, b := metricsOf(t, full), strings.Replace(metricsOf(t, part), resumed, "", 1); a != b {
		t.Errorf("metrics differ:\n%s\n---\n%s", a, b)
	}
}

// TestCheckpointRoundTrip: a run reopened from disk gives the same loss.
func TestCheckpointRoundTrip(t *testing.T) {
	cfg := tinyConfig("sep-full")
	cfg.Steps = 10
	dir := t.TempDir()
	train(t, cfg, Options{Dir: dir})
	r, err := OpenRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, _ := models.Encode(r.Vocab, tinyData(), models.EncodeOptions{Separators: true, MaxSrc: 8, MaxTgt: 10})
	bt := models.MakeBatch([]*models.Example{&ex[0], &ex[5]}, 2, 4)
	l1, err := bind(t, r).Loss(bt, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := OpenRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := bind(t, r2).Loss(bt, false, 0, 0)
	if l1 != l2 || math.IsNaN(l1) {
		t.Errorf("losses %v and %v after reloading", l1, l2)
	}
}

// TestBadInput: clear errors, nothing overwritten.
func TestBadInput(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps = 2
	t.Run("empty training data", func(t *testing.T) {
		_, err := Train(context.Background(), cfg, Options{Dir: t.TempDir(), Train: []data.Record{}})
		if err == nil || !strings.Contains(err.Error(), "empty") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("existing run", func(t *testing.T) {
		dir := t.TempDir()
		train(t, cfg, Options{Dir: dir})
		before, _ := os.ReadFile(filepath.Join(dir, ModelFile))
		_, err := Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData()})
		if err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("got %v", err)
		}
		after, _ := os.ReadFile(filepath.Join(dir, ModelFile))
		if !bytes.Equal(before, after) {
			t.Error("the existing run was changed")
		}
		train(t, cfg, Options{Dir: dir, Force: true})
	})
	t.Run("too long", func(t *testing.T) {
		long := append(tinyData(), data.Record{ID: "long", Input: "a b c d e f g h i j k", Output: "JUMP"})
		strict := cfg
		strict.Strict = true
		_, err := Train(context.Background(), strict, Options{Dir: t.TempDir(), Train: long})
		if err == nil || !strings.Contains(err.Error(), `"long"`) {
			t.Errorf("strict: got %v", err)
		}
		r := train(t, cfg, Options{Dir: t.TempDir(), Train: long})
		if r.Truncated != 1 {
			t.Errorf("truncated %d, want 1", r.Truncated)
		}
	})
	t.Run("corrupt checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		train(t, cfg, Options{Dir: dir})
		p := filepath.Join(dir, ModelFile)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:len(b)/2], 0o644)
		if _, err := OpenRun(dir, false); err == nil || !strings.Contains(err.Error(), "corrupt") {
			t.Errorf("got %v", err)
		}
		if _, err := Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Resume: true}); err == nil {
			t.Error("resume from a truncated checkpoint succeeded")
		}
	})
	t.Run("vocabulary mismatch", func(t *testing.T) {
		dir := t.TempDir()
		train(t, cfg, Options{Dir: dir})
		r, err := OpenRun(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		other := []data.Record{{ID: "x", Input: "look", Output: "LOOK"}}
		_, err = Train(context.Background(), r.Config, Options{Dir: t.TempDir(), Train: other, Vocab: r.Vocab})
		if err == nil || !strings.Contains(err.Error(), "vocabulary mismatch") {
			t.Errorf("got %v", err)
		}
		small := cfg
		small.Model.Dim = 8
		m, _ := transformer.New(withVocab(small.Model, r.Vocab), 1)
		if err := LoadWeights(filepath.Join(dir, ModelFile), m.Params()); err == nil {
			t.Error("loaded weights of another shape")
		}
	})
}

func withVocab(c models.Config, v *models.Vocab) models.Config {
	c.SrcVocab, c.TgtVocab = len(v.Source), len(v.Target)
	return c
}

// bind binds r's model to the CPU device for the test.
func bind(t *testing.T, r *Run) models.Seq2Seq {
	t.Helper()
	release, err := r.UseBackend(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return r.Model
}

// graphOnly hides the incremental decoder, so decoding re-runs the graph.
type graphOnly struct{ models.Seq2Seq }

// TestDecodePaths: the engine's incremental decoding and its decoder graph
// re-run over the whole prefix (the definition, checked against Gorgonia's
// TapeMachine in package engine's tests) agree, greedy and beam, on a
// partly trained model.
func TestDecodePaths(t *testing.T) {
	cfg := tinyConfig("sep-to-last")
	cfg.Steps = 40
	dir := t.TempDir()
	train(t, cfg, Options{Dir: dir})
	r, err := OpenRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	ex, _, _ := models.Encode(r.Vocab, tinyData(), models.EncodeOptions{Separators: true, MaxSrc: 8, MaxTgt: 10})
	m := bind(t, r)
	for _, beam := range []int{1, 3} {
		o := DecodeOptions{Beam: beam, Alpha: 0.6, MaxLen: 10, Batch: 4, Width: 4}
		a, err := Decode(context.Background(), m, ex, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Decode(context.Background(), graphOnly{m}, ex, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			for k := range a[i].Hyps {
				ha, hb := a[i].Hyps[k], b[i].Hyps[k]
				if r.Vocab.Detok(ha.IDs) != r.Vocab.Detok(hb.IDs) || math.Abs(ha.Score-hb.Score) > 1e-3 {
					t.Errorf("beam %d, example %d, hypothesis %d: %v %.4f vs %v %.4f", beam, i, k, ha.IDs, ha.Score, hb.IDs, hb.Score)
				}
			}
		}
	}
}
