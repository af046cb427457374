package engine_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"compbench/engine"
	"compbench/models"
	"compbench/train"
)

// decodeVariants cover absolute positions, relative biases and the
// separator masks.
var decodeVariants = []string{"transformer", "relative", "sep-to-last", "sep-to-sep-and-last"}

func examples(bt *models.Batch) []models.Example {
	ex := make([]models.Example, len(bt.Rows))
	for i, r := range bt.Rows {
		ex[i] = *r
	}
	return ex
}

// favourEnds raises the output biases of the separator and EOS, so that the
// untrained model's hypotheses contain separators (exercising their masks)
// and some finish before the maximum length.
func favourEnds(m *models.Transformer) {
	p := m.Params()
	for i, n := range p.Names {
		if n == "out.b" {
			p.Data(i)[models.SepID] = 1.5
			p.Data(i)[models.EOSID] = 0.8
		}
	}
}

// TestEngineDecodeMatchesCPU: greedy and beam decoding on the engine
// (incremental, tokens picked on the backend) give the CPU incremental
// decoder's tokens, and scores within 1e-5, with source rows of different
// lengths in one batch and a padded last batch.
func TestEngineDecodeMatchesCPU(t *testing.T) {
	for _, variant := range decodeVariants {
		for _, bk := range backends {
			t.Run(variant+"/"+bk.name, func(t *testing.T) {
				m, bt := tiny(t, variant)
				favourEnds(m)
				em, err := models.NewEngineModel(m, bk.be)
				if err != nil {
					t.Fatal(err)
				}
				defer em.Close()
				ex := examples(bt)
				for _, beam := range []int{1, 2, 3} {
					o := train.DecodeOptions{Beam: beam, MaxLen: 9, Batch: 3, Width: 4, Alpha: 0.6}
					want, err := train.Decode(context.Background(), m, ex, o, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, err := train.Decode(context.Background(), em, ex, o, nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if len(got[i].Hyps) != len(want[i].Hyps) {
							t.Fatalf("beam %d, row %d: %d hypotheses, want %d", beam, i, len(got[i].Hyps), len(want[i].Hyps))
						}
						for k, h := range want[i].Hyps {
							g := got[i].Hyps[k]
							if !reflect.DeepEqual(g.IDs, h.IDs) || math.Abs(g.Score-h.Score) > 1e-5 {
								t.Errorf("beam %d, row %d, hypothesis %d: engine %+v, cpu %+v", beam, i, k, g, h)
							}
						}
					}
				}
			})
		}
	}
}

// TestEngineStepLogits: the engine state's logits follow the CPU
// incremental decoder's through a fixed token sequence with separators and
// beam reorders (cache gathers), within 1e-5; StepGreedy and StepTopK pick
// from those logits.
func TestEngineStepLogits(t *testing.T) {
	for _, variant := range decodeVariants {
		t.Run(variant, func(t *testing.T) { checkStepLogits(t, variant, &engine.CPU{BLAS: true}, 1e-5) })
	}
}

// checkStepLogits runs the fixed sequence on be, logits within tol times
// the larger of 1 and the largest CPU logit.
func checkStepLogits(t *testing.T, variant string, be engine.Backend, tol float64) {
	m, bt := tiny(t, variant)
	em, err := models.NewEngineModel(m, be)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	mem, err := m.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	emem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 7
	cs, err := m.StartDecode(mem, steps)
	if err != nil {
		t.Fatal(err)
	}
	es, err := em.StartDecode(emem, steps)
	if err != nil {
		t.Fatal(err)
	}
	pk, ok := es.(models.Picker)
	if !ok {
		t.Fatal("engine decoding state has no Picker")
	}
	seq := [][]int{{models.StartID}, {4, 5}, {models.SepID}, {5, 4}, {4}, {models.SepID, 5}, {5}}
	perms := [][]int{nil, {1, 0, 3, 2}, nil, {0, 0, 2, 1}, {3, 3, 3, 3}, nil, nil}
	V := m.Cfg.TgtVocab
	for pos := 0; pos < steps; pos++ {
		toks := make([]int, bt.B)
		for b := range toks {
			toks[b] = seq[pos][b%len(seq[pos])]
		}
		want, err := cs.Step(toks)
		if err != nil {
			t.Fatal(err)
		}
		scale := 1.0
		for _, v := range want {
			scale = max(scale, math.Abs(float64(v)))
		}
		var got []float32
		switch pos % 3 {
		case 0:
			got, err = es.Step(toks)
		case 1:
			var ids []int
			var lps []float64
			ids, lps, err = pk.StepGreedy(toks)
			if err == nil && tol <= 1e-5 {
				checkGreedy(t, want, V, ids, lps)
			}
		case 2:
			var ids []int
			var lps []float32
			ids, lps, err = pk.StepTopK(toks, 3)
			if err == nil && tol <= 1e-5 {
				checkTopK(t, want, V, 3, ids, lps)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > tol*scale {
				t.Fatalf("step %d: logit %d is %v, the CPU decoder gives %v", pos, i, got[i], want[i])
			}
		}
		if p := perms[pos]; p != nil {
			cs.Reorder(p)
			es.Reorder(p)
		}
	}
}

// logSoftmax64 is the reference log-softmax in float64.
func logSoftmax64(row []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = float64(v) - mx - math.Log(s)
	}
	return out
}

func checkGreedy(t *testing.T, logits []float32, V int, ids []int, lps []float64) {
	t.Helper()
	for b := range ids {
		lp := logSoftmax64(logits[b*V : (b+1)*V])
		best := models.EOSID
		for k := range lp {
			if lp[k] > lp[best] && k != models.PadID && k != models.UnkID {
				best = k
			}
		}
		if ids[b] != best || math.Abs(lps[b]-lp[best]) > 1e-5 {
			t.Fatalf("row %d: greedy %d (%v), want %d (%v)", b, ids[b], lps[b], best, lp[best])
		}
	}
}

func checkTopK(t *testing.T, logits []float32, V, k int, ids []int, lps []float32) {
	t.Helper()
	for b := 0; b < len(ids)/k; b++ {
		lp := logSoftmax64(logits[b*V : (b+1)*V])
		prev := math.Inf(1)
		for j := 0; j < k; j++ {
			id, v := ids[b*k+j], float64(lps[b*k+j])
			if id == models.PadID || id == models.UnkID || math.Abs(v-lp[id]) > 1e-5 || v > prev {
				t.Fatalf("row %d: top-%d entry %d is id %d (%v), log-probability %v", b, k, j, id, v, lp[id])
			}
			prev = v
			// Nothing left out beats the k-th.
			if j == k-1 {
				for x, l := range lp {
					if x != models.PadID && x != models.UnkID && l > v+1e-5 && !contains(ids[b*k:(b+1)*k], x) {
						t.Fatalf("row %d: id %d (%v) missing from the top %d %v", b, x, l, k, ids[b*k:(b+1)*k])
					}
				}
			}
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestEngineDecodeErrors: bad tokens and lengths are errors, and a state
// replaced by a later StartDecode refuses to step.
func TestEngineDecodeErrors(t *testing.T) {
	m, bt := tiny(t, "relative")
	em, err := models.NewEngineModel(m, &engine.CPU{BLAS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	mem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	st, err := em.StartDecode(mem, 2)
	if err != nil {
		t.Fatal(err)
	}
	start := make([]int, bt.B)
	for i := range start {
		start[i] = models.StartID
	}
	bad := append([]int(nil), start...)
	bad[1] = m.Cfg.TgtVocab
	for _, c := range []struct {
		name   string
		tokens []int
		want   string
	}{
		{"token outside the vocabulary", bad, "outside the vocabulary"},
		{"wrong row count", start[:1], "tokens for"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := st.Step(c.tokens); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	t.Run("beyond the maximum length", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			if _, err := st.Step(start); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.Step(start); err == nil || !strings.Contains(err.Error(), "maximum length") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("replaced state", func(t *testing.T) {
		if _, err := em.StartDecode(mem, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Step(start); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("error %v", err)
		}
	})
}
