package engine_test

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"compbench/engine"
	"compbench/models"
	"compbench/models/transformer"
	"compbench/train"
)

// decodeVariants cover absolute positions, relative biases and the three
// separator masks.
var decodeVariants = []string{"transformer", "relative", "sep-to-last", "sep-to-sep-and-last", "sep-full"}

// The engine decoder is checked against the definition of decoding:
// Gorgonia's TapeMachine running the model's decoder graph (tapeModel.Logits)
// over each whole prefix at every step. train.Decode does exactly that for a
// tapeModel, which has no incremental decoder of its own.

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
func favourEnds(m *transformer.Model) {
	p := m.Params()
	for i, n := range p.Names {
		if n == "out.b" {
			p.Data(i)[models.SepID] = 1.5
			p.Data(i)[models.EOSID] = 0.8
		}
	}
}

// fp32Unit is the unit roundoff of float32, u = 2^-24.
const fp32Unit = 0x1p-24

// gammaN is Higham's γ_n = n·u/(1 − n·u): a float32 sum of n terms in any
// order lies within γ_n·Σ|terms| of the exact value, so two orders differ
// by at most 2·γ_n of Σ|terms|.
func gammaN(n int) float64 {
	nu := float64(n) * fp32Unit
	return nu / (1 - nu)
}

// decodeTol is the tolerance, relative to the larger of 1 and the largest
// logit magnitude, between the engine's step logits and the graph's, for
// config c with sums of at most n terms besides D and MLP (the source and
// decoded lengths). The two run the same float32 operations in other
// summation orders (one query row against a whole prefix, BLAS blockings,
// loops), encoder included. A sum of at most n terms computed in two
// orders differs by at most 2·γ_n of its scale, and a step passes through
// 30 sums in sequence per layer (the encoder's 11, the decoder's 19: see
// models' stepTol, the same bound) and 5 more (the final LayerNorms and
// the output projection). The differences add. Like cmd/compbench's
// crossTol, the bound assumes no amplification beyond each sum's scale.
func decodeTol(c transformer.Config, n int) float64 {
	n = max(n, c.Dim, c.MLPDim)
	return 2 * float64(30*c.Layers+5) * gammaN(n)
}

// lpTol bounds the difference of two log-probabilities computed from
// logits that differ by at most d (log-softmax moves by at most 2d), plus
// the log-softmax's own rounding over v classes.
func lpTol(d float64, v int) float64 { return 2*d + 2*gammaN(v) }

// scaled records the largest logit magnitude the graph produced.
type scaled struct {
	tapeModel
	scale float64
}

func (s *scaled) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	out, err := s.tapeModel.Logits(mem, decIn, T, pos)
	s.scale = max(s.scale, logitScale(out))
	return out, err
}

// logitScale is the larger of 1 and the largest magnitude in x.
func logitScale(x []float32) float64 {
	s := 1.0
	for _, v := range x {
		s = max(s, math.Abs(float64(v)))
	}
	return s
}

// checkDecode decodes ex with o on the graph (the oracle) and on em, and
// compares. Scores agree within the sum of the per-token log-probability
// tolerances (the length penalty only divides). Tokens are identical
// unless the oracle itself could not tell the choices apart: greedy rows
// may part where the graph's log-probabilities of the two tokens are
// within twice the tolerance, and a beam hypothesis may differ from the
// oracle's of the same rank when the graph scores both within twice the
// score tolerance.
func checkDecode(t *testing.T, m *transformer.Model, em *transformer.Engine, ex []models.Example, o train.DecodeOptions) {
	t.Helper()
	oracle := &scaled{tapeModel: tapeModel{m}}
	want, err := train.Decode(context.Background(), oracle, ex, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := train.Decode(context.Background(), em, ex, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	maxSrc := 0
	for _, e := range ex {
		maxSrc = max(maxSrc, len(e.Src))
	}
	V := m.Cfg.TgtVocab
	tokTol := lpTol(decodeTol(m.Cfg, max(maxSrc, o.MaxLen))*oracle.scale, V)
	scoreTol := float64(o.MaxLen) * tokTol
	for i := range want {
		if len(got[i].Hyps) != len(want[i].Hyps) {
			t.Fatalf("beam %d, row %d: %d hypotheses, the graph %d", o.Beam, i, len(got[i].Hyps), len(want[i].Hyps))
		}
		for k, h := range want[i].Hyps {
			g := got[i].Hyps[k]
			if reflect.DeepEqual(g.IDs, h.IDs) {
				if d := math.Abs(g.Score - h.Score); !(d <= scoreTol) {
					t.Errorf("beam %d, row %d, hypothesis %d: score %v, the graph %v (tolerance %.3g)", o.Beam, i, k, g.Score, h.Score, scoreTol)
				}
				continue
			}
			// A near tie of the oracle's, or a wrong token.
			if o.Beam == 1 {
				j := 0
				for j < len(g.IDs) && j < len(h.IDs) && g.IDs[j] == h.IDs[j] {
					j++
				}
				lp := graphLogProbs(t, m, &ex[i], h.IDs[:j])
				gt, ht := tokenAt(g.IDs, j), tokenAt(h.IDs, j)
				if margin := lp[ht] - lp[gt]; !(margin <= 2*tokTol) {
					t.Errorf("row %d: engine %v, graph %v: at token %d the graph prefers %d by %.3g > %.3g", i, g.IDs, h.IDs, j, ht, margin, 2*tokTol)
				}
				continue
			}
			gs := graphScore(t, m, &ex[i], g.IDs, o)
			if d := math.Abs(gs - g.Score); !(d <= scoreTol) {
				t.Errorf("beam %d, row %d, hypothesis %d: engine %+v, the graph scores it %v", o.Beam, i, k, g, gs)
			}
			if d := math.Abs(gs - h.Score); !(d <= 2*scoreTol) {
				t.Errorf("beam %d, row %d, hypothesis %d: engine %+v, graph %+v (no tie within %.3g)", o.Beam, i, k, g, h, 2*scoreTol)
			}
		}
	}
}

// tokenAt is ids[j], or EOS past the end.
func tokenAt(ids []int, j int) int {
	if j < len(ids) {
		return ids[j]
	}
	return models.EOSID
}

// graphLogProbs is the graph's next-token log-probabilities for e after
// START and prefix.
func graphLogProbs(t *testing.T, m *transformer.Model, e *models.Example, prefix []int) []float64 {
	t.Helper()
	bt := models.MakeBatch([]*models.Example{e}, 1, 4)
	mem, err := tapeModel{m}.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	n := len(prefix) + 1
	T := models.RoundUp(n, 4)
	in := make([]int, T)
	in[0] = models.StartID
	copy(in[1:], prefix)
	logits, err := tapeModel{m}.Logits(mem, in, T, n-1)
	if err != nil {
		t.Fatal(err)
	}
	return logSoftmax64(logits)
}

// graphScore is the graph's score of the beam hypothesis ids for e: the
// log-probability of ids, and of EOS when they end before the maximum
// length, over the length penalty.
func graphScore(t *testing.T, m *transformer.Model, e *models.Example, ids []int, o train.DecodeOptions) float64 {
	t.Helper()
	var lp float64
	toks := ids
	if len(ids) < o.MaxLen {
		toks = append(append([]int(nil), ids...), models.EOSID)
	}
	for j, tok := range toks {
		lp += graphLogProbs(t, m, e, toks[:j])[tok]
	}
	return lp / math.Pow((5+float64(len(toks)))/6, o.Alpha)
}

// TestEngineDecodeMatchesGraph: greedy and beam decoding on the engine
// (incremental, tokens picked on the backend, heads folded on the CPU)
// give the oracle's tokens and scores (checkDecode), with source rows of
// different lengths in one batch and a padded last batch.
func TestEngineDecodeMatchesGraph(t *testing.T) {
	for _, variant := range decodeVariants {
		for _, bk := range backends {
			t.Run(variant+"/"+bk.name, func(t *testing.T) {
				m, bt := tiny(t, variant)
				favourEnds(m)
				em, err := transformer.NewEngine(m, bk.be)
				if err != nil {
					t.Fatal(err)
				}
				defer em.Close()
				ex := examples(bt)
				for _, beam := range []int{1, 2, 3} {
					checkDecode(t, m, em, ex, train.DecodeOptions{Beam: beam, MaxLen: 9, Batch: 3, Width: 4, Alpha: 0.6})
				}
			})
		}
	}
}

// graphPrefix is a DecodeState that re-runs the decoder graph over every
// row's prefix: row b's logits at step t are Logits over its t+1 fed
// tokens, with its memory row. Reorder permutes the histories only, as the
// incremental decoder permutes its caches and keeps each row's memory.
type graphPrefix struct {
	m    tapeModel
	mem  *models.Memory
	hist [][]int
}

func (p *graphPrefix) Step(tokens []int) ([]float32, error) {
	for b, tok := range tokens {
		p.hist[b] = append(p.hist[b], tok)
	}
	n := len(p.hist[0])
	T := models.RoundUp(n, 4)
	in := make([]int, p.mem.B*T)
	for b, h := range p.hist {
		copy(in[b*T:], h)
	}
	return p.m.Logits(p.mem, in, T, n-1)
}

func (p *graphPrefix) Reorder(from []int) {
	old := p.hist
	p.hist = make([][]int, len(old))
	for i, f := range from {
		p.hist[i] = append([]int(nil), old[f]...)
	}
}

// TestEngineStepLogits: the engine state's logits follow the graph's over
// each prefix through a fixed token sequence with separators and beam
// reorders (cache gathers), within decodeTol; StepGreedy and StepTopK pick
// from those logits.
func TestEngineStepLogits(t *testing.T) {
	for _, variant := range decodeVariants {
		for _, bk := range backends {
			t.Run(variant+"/"+bk.name, func(t *testing.T) { checkStepLogits(t, variant, bk.be, 0) })
		}
	}
}

// checkStepLogits runs the fixed sequence on be, logits within tol times
// the larger of 1 and the largest logit of the graph's (tol 0: decodeTol).
func checkStepLogits(t *testing.T, variant string, be engine.Backend, tol float64) {
	m, bt := tiny(t, variant)
	em, err := transformer.NewEngine(m, be)
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	// Two rows per source, as beam search has: a reorder moves a row's
	// history to a row of the same source. (From another source it would
	// not be a prefix the graph can decode: the cached keys and values of
	// the second layer on depend on the memory.)
	const rep = 2
	mem, err := tapeModel{m}.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	emem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	mem, emem = mem.Repeat(rep), emem.Repeat(rep)
	B := mem.B
	const steps = 7
	if tol == 0 {
		tol = decodeTol(m.Cfg, max(bt.S, steps))
	}
	oracle := &graphPrefix{m: tapeModel{m}, mem: mem, hist: make([][]int, B)}
	es, err := em.StartDecode(emem, steps)
	if err != nil {
		t.Fatal(err)
	}
	pk, ok := es.(models.Picker)
	if !ok {
		t.Fatal("engine decoding state has no Picker")
	}
	seq := [][]int{{models.StartID}, {4, 5}, {models.SepID}, {5, 4, 4}, {4}, {models.SepID, 5}, {5}}
	perms := [][]int{nil, {1, 0, 3, 2, 5, 4, 7, 6}, nil, {0, 0, 2, 3, 5, 5, 6, 6}, {1, 1, 3, 3, 4, 4, 7, 7}, nil, nil}
	V := m.Cfg.TgtVocab
	for pos := 0; pos < steps; pos++ {
		toks := make([]int, B)
		for b := range toks {
			toks[b] = seq[pos][b%len(seq[pos])]
		}
		want, err := oracle.Step(toks)
		if err != nil {
			t.Fatal(err)
		}
		scale := logitScale(want)
		lt := lpTol(tol*scale, V)
		var got []float32
		switch pos % 3 {
		case 0:
			got, err = es.Step(toks)
		case 1:
			var ids []int
			var lps []float64
			if ids, lps, err = pk.StepGreedy(toks); err == nil {
				checkGreedy(t, want, V, ids, lps, lt)
			}
		case 2:
			var ids []int
			var lps []float32
			if ids, lps, err = pk.StepTopK(toks, 3); err == nil {
				checkTopK(t, want, V, 3, ids, lps, lt)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); !(d <= tol*scale) {
				t.Fatalf("step %d: logit %d is %v, the graph gives %v (tolerance %.3g of %.3g)", pos, i, got[i], want[i], tol, scale)
			}
		}
		if p := perms[pos]; p != nil {
			oracle.Reorder(p)
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

// checkGreedy checks greedy picks against the graph's logits: the best
// id (PAD and UNK skipped, EOS kept on ties), or one whose log-probability
// is within 2·tol of the best's; the log-probability within tol.
func checkGreedy(t *testing.T, logits []float32, V int, ids []int, lps []float64, tol float64) {
	t.Helper()
	for b := range ids {
		lp := logSoftmax64(logits[b*V : (b+1)*V])
		best := models.EOSID
		for k := range lp {
			if lp[k] > lp[best] && k != models.PadID && k != models.UnkID {
				best = k
			}
		}
		id := ids[b]
		if id < 0 || id >= V || id == models.PadID || id == models.UnkID || !(lp[best]-lp[id] <= 2*tol) || !(math.Abs(lps[b]-lp[id]) <= tol) {
			t.Fatalf("row %d: greedy %d (%v), the graph's best %d (%v), tolerance %.3g", b, id, lps[b], best, lp[best], tol)
		}
	}
}

// checkTopK checks top-k picks against the graph's logits: distinct ids
// (not PAD or UNK), log-probabilities within tol and in order, and nothing
// left out beats the k-th by more than 2·tol.
func checkTopK(t *testing.T, logits []float32, V, k int, ids []int, lps []float32, tol float64) {
	t.Helper()
	for b := 0; b < len(ids)/k; b++ {
		lp := logSoftmax64(logits[b*V : (b+1)*V])
		row := ids[b*k : (b+1)*k]
		prev := math.Inf(1)
		for j, id := range row {
			v := float64(lps[b*k+j])
			if id < 0 || id >= V || id == models.PadID || id == models.UnkID || slices.Contains(row[:j], id) ||
				!(math.Abs(v-lp[id]) <= tol) || v > prev {
				t.Fatalf("row %d: top-%d entry %d is id %d (%v, the graph %v), tolerance %.3g", b, k, j, id, v, lp[id], tol)
			}
			prev = v
		}
		for x, l := range lp {
			if x != models.PadID && x != models.UnkID && !slices.Contains(row, x) && l > lp[row[k-1]]+2*tol {
				t.Fatalf("row %d: id %d (%v) missing from the top %d %v", b, x, l, k, row)
			}
		}
	}
}

// TestEngineDecodeErrors: bad tokens and lengths are errors, and a state
// replaced by a later StartDecode refuses to step.
func TestEngineDecodeErrors(t *testing.T) {
	m, bt := tiny(t, "relative")
	em, err := transformer.NewEngine(m, &engine.CPU{BLAS: true})
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
