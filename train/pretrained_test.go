package train

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/models/pretrained"
)

// prefixOnly hides a Runner's StartDecode, so Decode re-runs the decoder
// over each prefix (Seq2Seq.Logits).
type prefixOnly struct{ models.Runner }

// TestDecodePretrainedCachedEqualsPrefix: greedy and beam search choose
// the same tokens, with nearly the same scores, on the pretrained models'
// key/value cache as over whole prefixes.
func TestDecodePretrainedCachedEqualsPrefix(t *testing.T) {
	recs := []data.Record{
		{ID: "a", Input: "jump twice", Output: "JUMP JUMP"},
		{ID: "b", Input: "turn around left thrice", Output: "LTURN LTURN"},
		{ID: "c", Input: "walk", Output: "WALK"},
	}
	for _, name := range []string{"t5-tiny", "t5v11-tiny", "bart-tiny"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "models", "pretrained", "testdata", name)
			v, err := pretrained.NewVocab(dir)
			if err != nil {
				t.Fatal(err)
			}
			variant := "t5"
			if name == "bart-tiny" {
				variant = "bart"
			}
			cfg := models.Config{Variant: variant, Pretrained: dir, Mask: "causal", MaxSrcLen: 16, MaxTgtLen: 16}
			m, err := pretrained.New(cfg, 1, v)
			if err != nil {
				t.Fatal(err)
			}
			r, err := m.Bind(&engine.CPU{BLAS: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, ok := r.(models.Stepper); !ok {
				t.Fatal("the pretrained runner does not decode incrementally")
			}
			ex, _, err := models.Encode(v, recs, cfg.EncodeOptions(false))
			if err != nil {
				t.Fatal(err)
			}
			for _, beam := range []int{1, 3} {
				o := DecodeOptions{Beam: beam, Alpha: 0.6, MaxLen: 10, Batch: 2, Width: 1}
				cached, err := Decode(context.Background(), r, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				plain, err := Decode(context.Background(), prefixOnly{r}, ex, o, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range cached {
					a, b := cached[i].Hyps[0], plain[i].Hyps[0]
					if fmt.Sprint(a.IDs) != fmt.Sprint(b.IDs) || !(abs(a.Score-b.Score) <= 1e-4) {
						t.Errorf("beam %d, example %d: cached %v (%v), prefix %v (%v)", beam, i, a.IDs, a.Score, b.IDs, b.Score)
					}
				}
			}
		})
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
