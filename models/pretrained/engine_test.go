package pretrained

import (
	"encoding/json"
	"fmt"
	G "gorgonia.org/gorgonia"
	"math"
	"os"
	"path/filepath"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
)

// refTexts are a fixture's reference examples as records.
func refTexts(t *testing.T, dir string) []data.Record {
	t.Helper()
	var ref struct {
		Examples []struct {
			Input  string `json:"input"`
			Target string `json:"target"`
		} `json:"examples"`
	}
	readJSON(t, filepath.Join(dir, "reference.json"), &ref)
	recs := make([]data.Record, len(ref.Examples))
	for i, e := range ref.Examples {
		recs[i] = data.Record{ID: e.Input, Input: e.Input, Output: e.Target}
	}
	return recs
}

// boundFixture is a fixture as a compbench model on the CPU backend, with
// its vocabulary and the reference examples encoded in compbench's ids.
func boundFixture(t *testing.T, name string) (*Model, *Engine, *models.Vocab, []models.Example, reference) {
	t.Helper()
	dir := filepath.Join("testdata", name)
	v, err := NewVocab(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := models.Config{Variant: f.Config.ModelType, Pretrained: dir, Mask: "causal", MaxSrcLen: 16, MaxTgtLen: 16}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, 1, v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.Bind(&engine.CPU{BLAS: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	ex, st, err := models.Encode(v, refTexts(t, dir), models.EncodeOptions{MaxSrc: 16, MaxTgt: 16})
	if err != nil {
		t.Fatal(err)
	}
	if st.UnknownSrc+st.UnknownTgt > 0 {
		t.Fatalf("%d unknown pieces", st.UnknownSrc+st.UnknownTgt)
	}
	return m, r.(*Engine), v, ex, readReference(t, dir)
}

// oneBatch pads ex into one batch.
func oneBatch(ex []models.Example) *models.Batch {
	rows := make([]*models.Example, len(ex))
	for i := range ex {
		rows[i] = &ex[i]
	}
	return models.MakeBatch(rows, len(rows), 1)
}

// TestRunnerMatchesReference: compbench's ids, framed at the model's edge,
// give the reference's model ids, loss and next-token logits. The batch
// is padded (examples of different lengths), so padding is exercised.
func TestRunnerMatchesReference(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m, r, _, ex, ref := boundFixture(t, name)
			bt := oneBatch(ex)
			src, S2, _, err := m.ids.source(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			dec, lab, T2, _ := m.ids.decoder(bt.DecIn, bt.Tgt, bt.B, bt.T)
			for b, e := range ref.Examples {
				for j, id := range e.InputIDs {
					if src[b*S2+j] != id {
						t.Fatalf("example %d: source ids %v, reference %v", b, src[b*S2:(b+1)*S2], e.InputIDs)
					}
				}
				for j := range e.Labels {
					if dec[b*T2+j] != e.DecoderInputIDs[j] || lab[b*T2+j] != e.Labels[j] {
						t.Fatalf("example %d: decoder ids %v labels %v, reference %v %v", b, dec[b*T2:(b+1)*T2], lab[b*T2:(b+1)*T2], e.DecoderInputIDs, e.Labels)
					}
				}
			}
			loss, err := r.Loss(bt, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(loss-wantLoss(ref)) > 1e-5 {
				t.Errorf("loss %v, reference %v", loss, wantLoss(ref))
			}
			// Next-token logits at every position, from the encoder run once
			// and the decoder over each prefix.
			mem, err := r.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			V, Vm := models.NumSpecials+m.Config().VocabSize, m.Config().VocabSize
			for pos := 0; pos < bt.T; pos++ {
				got, err := r.Logits(mem, bt.DecIn, bt.T, pos)
				if err != nil {
					t.Fatal(err)
				}
				for b, e := range ref.Examples {
					p := pos + len(m.ids.tgtPre)
					if p >= len(e.Logits) {
						continue
					}
					for k := 0; k < Vm; k++ {
						want, g := e.Logits[p][k], float64(got[b*V+models.NumSpecials+k])
						hidden := false
						for _, h := range m.ids.hidden {
							hidden = hidden || h == k
						}
						if hidden {
							want = math.Inf(-1)
						}
						if !(math.Abs(g-want) <= 1e-4) && !(math.IsInf(want, -1) && math.IsInf(g, -1)) {
							t.Fatalf("example %d, position %d, token %d: logit %v, reference %v", b, pos, k, g, want)
						}
					}
					if g, want := float64(got[b*V+models.EOSID]), e.Logits[p][m.ids.eos]; math.Abs(g-want) > 1e-4 {
						t.Fatalf("example %d, position %d: EOS logit %v, reference %v", b, pos, g, want)
					}
				}
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestPrefix: a task prefix is tokenized with the source, before it.
func TestPrefix(t *testing.T) {
	v, err := NewVocab(filepath.Join("testdata", "t5-tiny"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []data.Record{{ID: "a", Input: "jump twice", Output: "JUMP"}}
	plain, _, err := models.Encode(v, recs, models.EncodeOptions{MaxSrc: 16, MaxTgt: 16})
	if err != nil {
		t.Fatal(err)
	}
	pre, _, err := models.Encode(v, recs, models.EncodeOptions{MaxSrc: 16, MaxTgt: 16, Prefix: "walk left "})
	if err != nil {
		t.Fatal(err)
	}
	walkLeft, err := v.Subword().IDs("walk left")
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]int(nil), walkLeft...), plain[0].Src...)
	if fmt.Sprint(pre[0].Src) != fmt.Sprint(want) || len(walkLeft) != 2 {
		t.Errorf("source with prefix %v, want %v (prefix pieces %v)", pre[0].Src, want, walkLeft)
	}
	if got := v.DetokSource(pre[0].Tgt, nil); got != "JUMP" {
		t.Errorf("target text %q, want JUMP", got)
	}
}

// TestTokenizerSegmentations: T5's unigram tokenizer splits the fixture's
// texts into the hand-worked pieces (models/pretrained/testdata/README.md)
// and joins them back into the text.
func TestTokenizerSegmentations(t *testing.T) {
	dir := filepath.Join("testdata", "t5-tiny")
	var ref struct {
		Segmentations []struct {
			Text   string   `json:"text"`
			Pieces []string `json:"pieces"`
		} `json:"segmentations"`
	}
	readJSON(t, filepath.Join(dir, "reference.json"), &ref)
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokenizer(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref.Segmentations) == 0 {
		t.Fatal("no segmentations in the fixture")
	}
	for _, s := range ref.Segmentations {
		t.Run(s.Text, func(t *testing.T) {
			ids, err := tok.IDs(s.Text)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(ids))
			for i, id := range ids {
				got[i] = tok.Pieces()[id-models.NumSpecials]
			}
			if fmt.Sprint(got) != fmt.Sprint(s.Pieces) {
				t.Errorf("pieces %q, want %q", got, s.Pieces)
			}
			if back := tok.Text(ids); back != s.Text {
				t.Errorf("joined back %q, want %q", back, s.Text)
			}
		})
	}
	// A character outside the vocabulary is the unknown token.
	if ids, err := tok.IDs("jump 7"); err != nil || ids[len(ids)-1] != models.UnkID {
		t.Errorf("\"jump 7\" gives %v (%v), want UNK last", ids, err)
	}
}

// TestDropoutTraining: a training graph drops at Hugging Face's places with
// the masks of its step: the same step gives the same loss, another step
// another; evaluation has no dropout; the engine's loss is the
// TapeMachine's on the same graph and masks (float32 sums in one order
// on both, within 1e-6 of the loss).
func TestDropoutTraining(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m, r, _, ex, ref := boundFixture(t, name)
			bt := oneBatch(ex)
			loss := func(train bool, step int) float64 {
				l, err := r.Loss(bt, train, 0, step)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			a, again, other, eval := loss(true, 3), loss(true, 3), loss(true, 4), loss(false, 3)
			if a != again {
				t.Errorf("step 3 twice: %v then %v", a, again)
			}
			if a == other || a == eval {
				t.Errorf("dropout inactive: step 3 %v, step 4 %v, evaluation %v", a, other, eval)
			}
			if math.Abs(eval-wantLoss(ref)) > 1e-5 {
				t.Errorf("evaluation loss %v, reference %v", eval, wantLoss(ref))
			}
			v, err := m.batchView(bt, 0, true, 3)
			if err != nil {
				t.Fatal(err)
			}
			for k, n := range v.Inputs {
				if err := G.Let(n, v.Values[k]); err != nil {
					t.Fatal(err)
				}
			}
			vm := G.NewTapeMachine(v.Out.Graph())
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			if tape := float64(v.Out.Value().Data().(float32)); math.Abs(tape-a) > 1e-6*math.Max(1, math.Abs(a)) {
				t.Errorf("engine loss %v, TapeMachine %v", a, tape)
			}
		})
	}
}
