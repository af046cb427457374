package transformer

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/robustfill"
	"compbench/engine"
	"compbench/models"
)

// rfRecords samples n small RobustFill tasks (one expression, short
// inputs) with the project's sampler; examples sets how many I/O examples
// each has (cycled).
func rfRecords(t testing.TB, n int, seed uint64, examples ...int) []data.Record {
	t.Helper()
	rng := data.NewRand(seed)
	var out []data.Record
	for i := range n {
		cfg := robustfill.Config{NumExamples: examples[i%len(examples)], MaxInputLen: 8, MaxInputPieces: 3, MaxRepeat: 2, MaxTries: 100}
		s, err := robustfill.NewSampler(cfg)
		if err != nil {
			t.Fatal(err)
		}
		task, err := s.Sample(rng, robustfill.Spec{Pools: []robustfill.Pool{robustfill.PoolNoCompose}})
		if err != nil {
			t.Fatal(err)
		}
		r := task.Record()
		r.ID = fmt.Sprintf("rf%d", i)
		out = append(out, r)
	}
	return out
}

// tinyIOModel is a double I/O model over recs' vocabulary.
func tinyIOModel(t testing.TB, variant string, recs []data.Record) (*Model, *models.Vocab, []models.Example) {
	t.Helper()
	v := models.BuildVocab(recs)
	cfg := models.DefaultConfig()
	if err := cfg.ApplyVariant(variant); err != nil {
		t.Fatal(err)
	}
	cfg.Layers, cfg.Heads, cfg.Dim, cfg.MLPDim, cfg.Dropout = 1, 2, 8, 16, 0
	cfg.RelBuckets, cfg.RelMaxDistance = 4, 8
	cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
	cfg.IOEncoder = models.IODouble
	m, err := New(cfg, 1)
	if err == nil {
		err = m.SetIOVocab(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	ex, _, err := models.Encode(v, recs, models.EncodeOptions{Separators: cfg.Separators, MaxSrc: 256, MaxTgt: 64})
	if err != nil {
		t.Fatal(err)
	}
	return m, v, ex
}

func rowsOf(ex []models.Example) []*models.Example {
	out := make([]*models.Example, len(ex))
	for i := range ex {
		out[i] = &ex[i]
	}
	return out
}

// encodeRaw runs the double encoder graph and returns the encoded outputs
// [B*E*So, D] with the split batch.
func encodeRaw(t *testing.T, m *Model, src []int, B, S int) ([]float32, *ioBatch) {
	t.Helper()
	ib, err := m.splitIO(src, B, S)
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.graph(ib.key(kindEncode, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.setIOInputs(c, ib, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.run(c); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), c.out.Value().Data().([]float32)...), ib
}

func TestSplitIO(t *testing.T) {
	recs := []data.Record{
		{ID: "a", Input: "a b -> A | c -> C C | d ->", Output: "X"},
		{ID: "b", Input: "e f g h i j k l m -> E", Output: "Y"},
		{ID: "c", Input: "x", Output: "Z"}, // no arrow: an input without output
	}
	m, v, ex := tinyIOModel(t, "transformer", recs)
	bt := models.MakeBatch(rowsOf(ex), 4, 4) // row 3 is padding
	ib, err := m.splitIO(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	if ib.B != 4 || ib.E != 3 || ib.Si != 16 || ib.So != 8 {
		t.Fatalf("shape B %d E %d Si %d So %d, want 4 3 16 8", ib.B, ib.E, ib.Si, ib.So)
	}
	if got, want := fmt.Sprint(ib.InLen), "[2 1 1 9 0 0 1 0 0 0 0 0]"; got != want {
		t.Errorf("input lengths %s, want %s", got, want)
	}
	if got, want := fmt.Sprint(ib.OutLen), "[1 2 0 1 0 0 0 0 0 0 0 0]"; got != want {
		t.Errorf("output lengths %s, want %s", got, want)
	}
	id := func(tok string) int { i, _ := v.SourceIDs([]string{tok}); return i[0] }
	if got, want := ib.Out[1*ib.So:1*ib.So+3], []int{id("C"), id("C"), models.PadID}; !slices.Equal(got, want) {
		t.Errorf("example (0,1) output %v, want %v", got, want)
	}
	if got, want := ib.In[3*ib.Si:3*ib.Si+2], []int{id("e"), id("f")}; !slices.Equal(got, want) {
		t.Errorf("example (1,0) input %v, want %v", got, want)
	}
	t.Run("unset", func(t *testing.T) {
		flat, _, _ := tinyModel(t, "transformer", tinyRecords())
		if _, err := flat.splitIO(bt.Src, bt.B, bt.S); err == nil {
			t.Error("split without the structure ids")
		}
	})
}

// TestIOMemoryShapes: the encoder graph gives [B*E*So, D]; the decoding
// memory is each row's real encoded outputs, concatenated.
func TestIOMemoryShapes(t *testing.T) {
	m, _, ex := tinyIOModel(t, "transformer", rfRecords(t, 3, 1, 4, 2, 3))
	bt := models.MakeBatch(rowsOf(ex), 4, 8)
	raw, ib := encodeRaw(t, m, bt.Src, bt.B, bt.S)
	d := m.Cfg.Dim
	if ib.E != 4 || len(raw) != ib.B*ib.E*ib.So*d {
		t.Fatalf("E %d, %d values, want 4 and %d", ib.E, len(raw), ib.B*ib.E*ib.So*d)
	}
	mem, err := m.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	if mem.B != 4 || mem.S%ioWidth != 0 || len(mem.Data) != mem.B*mem.S*d {
		t.Fatalf("memory B %d S %d with %d values", mem.B, mem.S, len(mem.Data))
	}
	for b := range bt.B {
		want := 0
		if b < len(ex) {
			for _, o := range []int{0, 1, 2, 3} {
				want += ib.OutLen[b*ib.E+o]
			}
		}
		if mem.SrcLen[b] != want {
			t.Errorf("row %d: memory length %d, want %d", b, mem.SrcLen[b], want)
		}
		// Row b's memory is its examples' encoded outputs in order.
		at := 0
		for e := range ib.E {
			k := b*ib.E + e
			for j := range ib.OutLen[k] {
				for c := range d {
					if mem.Data[(b*mem.S+at)*d+c] != raw[(k*ib.So+j)*d+c] {
						t.Fatalf("row %d example %d position %d: memory differs from the encoded output", b, e, j)
					}
				}
				at++
			}
		}
		for j := at * d; j < mem.S*d; j++ {
			if mem.Data[b*mem.S*d+j] != 0 {
				t.Fatalf("row %d: padding of the memory is not zero", b)
			}
		}
	}
}

// withIO rewrites example e of a record's I/O specification.
func withIO(r data.Record, e int, in, out string) data.Record {
	r.Inputs = slices.Clone(r.Inputs)
	r.Outputs = slices.Clone(r.Outputs)
	if in != "" {
		r.Inputs[e] = in
	}
	if out != "" {
		r.Outputs[e] = out
	}
	r.Input = robustfill.EncodeIO(r.Inputs, r.Outputs)
	return r
}

// TestIOLocality: changing example e's input changes the encoded output of
// example e of that record only; changing its output likewise; the
// decoder's logits change for that record only.
func TestIOLocality(t *testing.T) {
	recs := rfRecords(t, 2, 2, 3)
	m, v, _ := tinyIOModel(t, "relative", recs)
	// Characters from the records, so none is unknown.
	in := strings.Repeat(recs[1].Inputs[0][:1], 3)
	out := recs[1].Outputs[2][:1]
	base := encodeRecs(t, v, recs)
	cases := []struct {
		name string
		rec  data.Record
	}{
		{"input of example 1", withIO(recs[0], 1, in, "")},
		{"output of example 1", withIO(recs[0], 1, "", out)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			changed := encodeRecs(t, v, []data.Record{c.rec, recs[1]})
			b0, ib0 := encodeRaw(t, m, base.Src, base.B, base.S)
			b1, ib1 := encodeRaw(t, m, changed.Src, changed.B, changed.S)
			if ib0.E != ib1.E || ib0.So != ib1.So {
				t.Fatalf("shapes differ: E %d/%d So %d/%d; pick other characters", ib0.E, ib1.E, ib0.So, ib1.So)
			}
			d, so := m.Cfg.Dim, ib0.So
			for k := range ib0.B * ib0.E {
				n := max(ib0.OutLen[k], ib1.OutLen[k])
				same := slices.Equal(b0[k*so*d:(k*so+n)*d], b1[k*so*d:(k*so+n)*d])
				if k == 1 && same {
					t.Errorf("example 1 of record 0: encoded output unchanged")
				}
				if k != 1 && !same {
					t.Errorf("sequence %d (row %d, example %d): encoded output changed", k, k/ib0.E, k%ib0.E)
				}
			}
			// The decoder sees the change in row 0 only.
			l0 := logitsAt(t, m, base, 1)
			l1 := logitsAt(t, m, changed, 1)
			V := m.Cfg.TgtVocab
			if slices.Equal(l0[:V], l1[:V]) {
				t.Error("row 0: logits unchanged")
			}
			for j := V; j < 2*V; j++ {
				if math.Abs(float64(l0[j]-l1[j])) > 1e-5 {
					t.Fatalf("row 1: logit %d changed from %v to %v", j-V, l0[j], l1[j])
				}
			}
		})
	}
}

func encodeRecs(t *testing.T, v *models.Vocab, recs []data.Record) *models.Batch {
	t.Helper()
	ex, _, err := models.Encode(v, recs, models.EncodeOptions{MaxSrc: 256, MaxTgt: 64})
	if err != nil {
		t.Fatal(err)
	}
	return models.MakeBatch(rowsOf(ex), len(ex), 8)
}

// logitsAt is the decoder graph's logits at pos over bt's gold prefix.
func logitsAt(t *testing.T, m *Model, bt *models.Batch, pos int) []float32 {
	t.Helper()
	mem, err := m.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Logits(mem, bt.DecIn, bt.T, pos)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIOPaddedExamples: a record with 2 examples batched with one of 4 (its
// missing examples fully masked) gets the memory and the loss it gets alone.
func TestIOPaddedExamples(t *testing.T) {
	recs := rfRecords(t, 2, 3, 2, 4)
	m, _, ex := tinyIOModel(t, "transformer", recs)
	alone := models.MakeBatch([]*models.Example{&ex[0]}, 1, 8)
	both := models.MakeBatch([]*models.Example{&ex[0], &ex[1]}, 2, 8)
	ma, err := m.Encode(alone.Src, alone.B, alone.S)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := m.Encode(both.Src, both.B, both.S)
	if err != nil {
		t.Fatal(err)
	}
	if _, ib := encodeRaw(t, m, both.Src, both.B, both.S); ib.E != 4 {
		t.Fatalf("batch has %d examples per row, want 4", ib.E)
	}
	if ma.SrcLen[0] != mb.SrcLen[0] {
		t.Fatalf("memory length %d alone, %d batched", ma.SrcLen[0], mb.SrcLen[0])
	}
	d := m.Cfg.Dim
	for j := range ma.SrcLen[0] * d {
		if math.Abs(float64(ma.Data[j]-mb.Data[j])) > 1e-5 {
			t.Fatalf("memory value %d: %v alone, %v batched", j, ma.Data[j], mb.Data[j])
		}
	}
	// Loss of row 0 alone against the batch: the padded row scores nothing,
	// so a batch of the record and an empty row gives the same mean.
	padded := models.MakeBatch([]*models.Example{&ex[0]}, 2, 8)
	la, err := m.Loss(alone, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := m.Loss(padded, false, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(la-lp) > 1e-5 {
		t.Errorf("loss %v alone, %v with a padding row", la, lp)
	}
}

// TestIOIncrementalMatchesLoss: the decoding path (compacted memory, the
// engine's incremental decoder) scores the gold targets as the training graph does
// (memory with masked holes).
func TestIOIncrementalMatchesLoss(t *testing.T) {
	for _, variant := range []string{"transformer", "sep-to-last"} {
		t.Run(variant, func(t *testing.T) {
			m, _, ex := tinyIOModel(t, variant, rfRecords(t, 3, 4, 4, 1, 3))
			bt := models.MakeBatch(rowsOf(ex), 4, 8)
			loss, err := m.Loss(bt, false, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			em, err := NewEngine(m, &engine.CPU{BLAS: true})
			if err != nil {
				t.Fatal(err)
			}
			defer em.Close()
			mem, err := em.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			st, err := em.StartDecode(mem, bt.T)
			if err != nil {
				t.Fatal(err)
			}
			V := m.Cfg.TgtVocab
			var nll float64
			for p := range bt.T {
				toks := make([]int, bt.B)
				for b := range toks {
					toks[b] = bt.DecIn[b*bt.T+p]
				}
				logits, err := st.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				for b := range bt.B {
					y := bt.Tgt[b*bt.T+p]
					if y == models.PadID {
						continue
					}
					row := logits[b*V : (b+1)*V]
					mx := slices.Max(row)
					var z float64
					for _, l := range row {
						z += math.Exp(float64(l - mx))
					}
					nll += math.Log(z) - float64(row[y]-mx)
				}
			}
			if got := nll / float64(bt.Tokens); math.Abs(got-loss) > 1e-4*max(1, loss) {
				t.Errorf("incremental decoder: mean loss %v, graph %v", got, loss)
			}
		})
	}
}

// TestIOGradient: the backward pass of the double model matches central
// finite differences on a few weights of every parameter, and every
// parameter receives a gradient.
func TestIOGradient(t *testing.T) {
	for _, variant := range []string{"transformer", "sep-to-last"} {
		t.Run(variant, func(t *testing.T) {
			// Outputs of several characters (a one-character output gives
			// its self-attention nothing to learn), 2-4 examples.
			m, _, ex := tinyIOModel(t, variant, rfRecords(t, 3, 1, 4, 2, 3))
			bt := models.MakeBatch(rowsOf(ex), 4, 8)
			if _, err := m.Loss(bt, true, 0.1, 1); err != nil {
				t.Fatal(err)
			}
			p := m.Params()
			grads := make([][]float32, len(p.Grads))
			for i := range grads {
				grads[i] = slices.Clone(p.Grads[i])
			}
			const h = 2e-3
			for i, name := range p.Names {
				var norm float64
				for _, g := range grads[i] {
					norm += math.Abs(float64(g))
				}
				// Key biases shift every score of a query alike, so
				// softmax gives them no gradient.
				if norm == 0 && !strings.HasSuffix(name, ".bk") {
					t.Errorf("%s: no gradient", name)
				}
				w := p.Data(i)
				for _, k := range []int{0, len(w) / 2, len(w) - 1} {
					old := w[k]
					w[k] = old + h
					lp, err := m.Loss(bt, false, 0.1, 0)
					if err != nil {
						t.Fatal(err)
					}
					w[k] = old - h
					lm, _ := m.Loss(bt, false, 0.1, 0)
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

// TestIODeterminism: two models from one seed give the same losses and
// gradients, dropout included.
func TestIODeterminism(t *testing.T) {
	recs := rfRecords(t, 3, 6, 4)
	a, _, ex := tinyIOModel(t, "relative", recs)
	b, _, _ := tinyIOModel(t, "relative", recs)
	a.Cfg.Dropout, b.Cfg.Dropout = 0.3, 0.3
	bt := models.MakeBatch(rowsOf(ex), 3, 8)
	for step := 1; step <= 3; step++ {
		la, err := a.Loss(bt, true, 0, step)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := b.Loss(bt, true, 0, step)
		if err != nil {
			t.Fatal(err)
		}
		if la != lb {
			t.Fatalf("step %d: losses %v and %v", step, la, lb)
		}
		for i := range a.p.Grads {
			if !slices.Equal(a.p.Grads[i], b.p.Grads[i]) {
				t.Fatalf("step %d: gradients of %s differ", step, a.p.Names[i])
			}
		}
	}
}

// TestIOWeightNames pins the checkpoint names: the flat model's weights,
// with the same initial values, then the output encoder's.
func TestIOWeightNames(t *testing.T) {
	recs := rfRecords(t, 2, 7, 4)
	d, _, _ := tinyIOModel(t, "relative", recs)
	cfg := asRun(d.Cfg)
	cfg.IOEncoder = ""
	f, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := len(f.p.Names)
	if !slices.Equal(d.p.Names[:n], f.p.Names) {
		t.Fatal("the double model's first weights are not the flat model's")
	}
	for i := range n {
		if !slices.Equal(d.p.Data(i), f.p.Data(i)) {
			t.Errorf("%s: initial values differ from the flat model's", f.p.Names[i])
		}
	}
	want := "io0.self.wq io0.self.wk io0.self.wv io0.self.wo io0.self.bq io0.self.bk io0.self.bv io0.self.bo io0.self.rel " +
		"io0.cross.wq io0.cross.wk io0.cross.wv io0.cross.wo io0.cross.bq io0.cross.bk io0.cross.bv io0.cross.bo " +
		"io0.ln0.g io0.ln0.b io0.ln1.g io0.ln1.b io0.ln2.g io0.ln2.b io0.ffn.w1 io0.ffn.b1 io0.ffn.w2 io0.ffn.b2 io.ln.g io.ln.b"
	if got := strings.Join(d.p.Names[n:], " "); got != want {
		t.Errorf("added weights\n got %s\nwant %s", got, want)
	}
}

func TestIOConfig(t *testing.T) {
	base := models.DefaultConfig()
	base.SrcVocab, base.TgtVocab = 10, 10
	cases := []struct {
		name    string
		variant string
		io      string
		ok      bool
	}{
		{"empty is flat", "transformer", "", true},
		{"flat", "transformer", "flat", true},
		{"double", "sep-to-last", "double", true},
		{"unknown", "transformer", "triple", false},
		{"lstm", "lstm-attention", "double", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			if err := cfg.ApplyVariant(c.variant); err != nil {
				t.Fatal(err)
			}
			cfg.IOEncoder = c.io
			err := cfg.Validate() // the shared fields, then the family's
			if tc := ConfigOf(cfg); err == nil && !models.IsLSTM(cfg.Variant) {
				err = tc.Validate()
			}
			if (err == nil) != c.ok {
				t.Errorf("validation: %v, want ok %v", err, c.ok)
			}
		})
	}
	t.Run("old config", func(t *testing.T) {
		var c models.Config
		if err := json.Unmarshal([]byte(`{"variant":"transformer"}`), &c); err != nil {
			t.Fatal(err)
		}
		if c.DoubleIO() {
			t.Error("a config without io_encoder is double")
		}
		b, _ := json.Marshal(models.DefaultConfig())
		if strings.Contains(string(b), "io_encoder") {
			t.Errorf("the default config writes io_encoder: %s", b)
		}
	})
	t.Run("text sources", func(t *testing.T) {
		v := models.BuildVocab(tinyRecords())
		cfg := base
		cfg.Layers, cfg.Dim, cfg.Heads, cfg.MLPDim = 1, 8, 2, 8
		cfg.SrcVocab, cfg.TgtVocab = len(v.Source), len(v.Target)
		cfg.IOEncoder = models.IODouble
		m, err := New(cfg, 1)
		if err == nil {
			err = m.SetIOVocab(v)
		}
		if err == nil || !strings.Contains(err.Error(), "->") {
			t.Errorf("double I/O over SCAN sources: error %v", err)
		}
	})
}

// TestSplitIOFallback: the double I/O encoder splits records that carry
// only inputs and outputs into their examples, pipes and arrows inside the
// strings included.
func TestSplitIOFallback(t *testing.T) {
	var recs []data.Record
	for i, tc := range ioCases {
		recs = append(recs, data.Record{ID: fmt.Sprint(i), Inputs: tc.ins, Outputs: tc.outs, Output: "X"})
	}
	m, _, ex := tinyIOModel(t, "transformer", recs)
	for i, tc := range ioCases {
		t.Run(tc.name, func(t *testing.T) {
			bt := models.MakeBatch([]*models.Example{&ex[i]}, 1, 4)
			ib, err := m.splitIO(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			if ib.E != len(tc.ins) {
				t.Fatalf("%d examples, want %d", ib.E, len(tc.ins))
			}
			if !slices.Equal(ib.InLen, tc.inLen) || !slices.Equal(ib.OutLen, tc.outLen) {
				t.Errorf("lengths in %v out %v, want in %v out %v", ib.InLen, ib.OutLen, tc.inLen, tc.outLen)
			}
		})
	}
}

// ioCases are I/O examples whose characters collide with the structure
// tokens or the tokenizer: pipes, arrows, spaces, empty strings, other
// white space, escapes spelled out, non-ASCII and invalid UTF-8.
var ioCases = []struct {
	name      string
	ins       []string
	outs      []string
	want      string // the flat source tokens, space-separated
	inLen     []int  // characters per input
	outLen    []int  // characters per output
	roundTrip bool   // robustfill.DecodeIO gives ins and outs back
}{
	{"plain", []string{"ab", "c"}, []string{"A", "C"}, "a b -> A | c -> C", []int{2, 1}, []int{1, 1}, true},
	{"pipe", []string{"a|b", "|"}, []string{"|", "x|"}, "a PIPE b -> PIPE | PIPE -> x PIPE", []int{3, 1}, []int{1, 2}, true},
	{"arrow", []string{"a->b", "->"}, []string{"->", ">-"}, "a - > b -> - > | - > -> > -", []int{4, 2}, []int{2, 2}, true},
	{"spaces", []string{" a  b ", " "}, []string{"a b", "  "}, "SPACE a SPACE SPACE b SPACE -> a SPACE b | SPACE -> SPACE SPACE", []int{6, 1}, []int{3, 2}, true},
	{"empty input", []string{"", "x"}, []string{"y", "z"}, "-> y | x -> z", []int{0, 1}, []int{1, 1}, true},
	{"empty output", []string{"x", "y"}, []string{"", ""}, "x -> | y ->", []int{1, 1}, []int{0, 0}, true},
	{"all empty", []string{"", ""}, []string{"", ""}, "-> | ->", []int{0, 0}, []int{0, 0}, true},
	{"missing outputs", []string{"a", "b"}, []string{"A"}, "a -> A | b ->", []int{1, 1}, []int{1, 0}, false},
	{"other white space", []string{"a\tb\n"}, []string{"\u00a0"}, "a U+0009 b U+000A -> U+00A0", []int{4}, []int{1}, true},
	{"escape lookalikes", []string{"SPACE", "PIPE"}, []string{"U+0020", "<sp>"}, "S P A C E -> U + 0 0 2 0 | P I P E -> < s p >", []int{5, 4}, []int{6, 4}, true},
	{"non-ASCII", []string{"é|ü"}, []string{"日本"}, "é PIPE ü -> 日 本", []int{3}, []int{2}, true},
	{"invalid UTF-8", []string{"a\xffb"}, []string{"\x00"}, "a U+FFFD b -> U+0000", []int{3}, []int{1}, false},
}
