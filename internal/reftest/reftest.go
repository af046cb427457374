// Package reftest is what the tests against the float64 PyTorch references
// of scripts/baseline_reference.py share: reading a fixture (cases.json and
// one safetensors file per case), loading its weights into a model, and the
// one tolerance with which every float32 result is compared with its
// reference (Bound).
package reftest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"compbench/models"
	"compbench/safetensors"
)

// U is float32's unit roundoff, 2⁻²⁴.
const U = 0x1p-24

// Bound is the rounding error of a float32 computation whose longest path,
// from the weights through the loss and back to a gradient, passes through
// Depth stages (a matrix product, a sum, or an elementwise function), none
// of which sums more than N terms.
//
// Derivation. A float32 operation returns its exact result times 1+δ,
// |δ| ≤ u = 2⁻²⁴ (a few u for vecmath's exp and tanh, which count as
// stages of their own). A stage's output is then, to first order, exact
// plus Σ_i w_i·θ_i relative to the magnitude of the terms it sums, where
// term i has weight w_i ≤ 1, Σ w_i = 1, and θ_i is a sum of at most N of
// the δ. Following Higham and Mary (SIAM J. Sci. Comput. 41, 2019), the δ
// are mean-independent; Azuma–Hoeffding's inequality then bounds a sum of
// δ with weights c_k by P(|S| ≥ t) ≤ 2·exp(−t²/(2·u²·Σc_k²)), and a stage
// contributes Σ c_k² ≤ N·max w_i·Σ w_i ≤ N. With the values kept of order
// one (LayerNorm, softmax, σ and tanh bound them) and no stage amplifying
// the relative error that enters it, the errors of the Depth stages add,
// so the output's relative error has Σc_k² ≤ Depth·N and
//
//	rtol = Depth·√N·u
//
// fails with probability at most 2·exp(−Depth/2): below 1e-20 for the
// depths of the models tested (100 and more). The no-amplification
// premise is the assumption here; the tests log, with -v, how far below
// the bound each tensor stays.
//
// A value's error is relative to the magnitude of the terms it sums, which
// exceeds the value itself where they cancel: the tolerance of a value is
// rtol·(scale + |want|), scale being the largest magnitude in its reference
// tensor (Tol).
type Bound struct{ N, Depth int }

// Rtol is Depth·√N·u.
func (b Bound) Rtol() float64 { return float64(b.Depth) * math.Sqrt(float64(b.N)) * U }

// Tol is the tolerance of a tensor whose reference values reach scale in
// magnitude.
func (b Bound) Tol(scale float64) Tol {
	r := b.Rtol()
	return Tol{Atol: r * scale, Rtol: r}
}

// Tol accepts got for want when |got − want| ≤ Atol + Rtol·|want|.
type Tol struct{ Atol, Rtol float64 }

// Worst returns the largest |got − want| / (Atol + Rtol·|want|) and where it
// is (-1 when there are no values). A ratio above 1 is out of tolerance; a
// NaN in got makes it +Inf.
func (t Tol) Worst(got []float32, want []float64) (ratio float64, at int) {
	at = -1
	for i, w := range want {
		d := math.Abs(float64(got[i]) - w)
		if d != d {
			d = math.Inf(1)
		}
		r := d / (t.Atol + t.Rtol*math.Abs(w))
		if d == 0 {
			r = 0
		}
		if at < 0 || r > ratio {
			ratio, at = r, i
		}
	}
	return ratio, at
}

// Check compares got with want under b's tolerance at scale (0: the
// largest |want|), fails tb naming the worst value if any is out of
// tolerance, logs the worst ratio, and returns it.
func (b Bound) Check(tb testing.TB, what string, got []float32, want []float64, scale float64) float64 {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%s: %d values, reference %d", what, len(got), len(want))
		return math.Inf(1)
	}
	if scale == 0 {
		scale = MaxAbs(want)
	}
	tol := b.Tol(scale)
	r, i := tol.Worst(got, want)
	if r > 1 {
		tb.Errorf("%s[%d] = %.9g, reference %.9g: |difference| %.3g exceeds %.3g + %.3g·|reference| (%.3g times)",
			what, i, got[i], want[i], math.Abs(float64(got[i])-want[i]), tol.Atol, tol.Rtol, r)
	} else if i >= 0 {
		tb.Logf("%s: within %.3g of the tolerance (rtol %.3g, scale %.3g)", what, r, tol.Rtol, scale)
	}
	return r
}

// MaxAbs is the largest |v|.
func MaxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// Case is one case of a fixture's cases.json.
type Case struct {
	Name string `json:"name"`
	// Config is the run configuration in config.json's keys (Decode).
	Config    json.RawMessage `json:"config"`
	Smoothing float64         `json:"smoothing"`
	// Src and Tgt are the batch's rows: source ids, and target ids ending
	// in EOS (copy ids for lstm-copy).
	Src [][]int `json:"src"`
	Tgt [][]int `json:"tgt"`
	// Loss is the mean token loss; Objective what training minimises (the
	// loss plus ACT's ponder cost), whose gradients the fixture holds.
	Loss      float64 `json:"loss"`
	Objective float64 `json:"objective"`
	Seed      int     `json:"seed"`
	Tensors   string  `json:"tensors"`
	// Vocab is the token lists (lstm-copy matches tokens by them).
	Vocab *struct {
		Source []string `json:"source"`
		Target []string `json:"target"`
	} `json:"vocab"`
}

// ReadCases reads dir/cases.json.
func ReadCases(dir string) ([]Case, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var idx struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s/cases.json: %w", dir, err)
	}
	return idx.Cases, nil
}

// ModelConfig is the case's configuration, every key known.
func (c *Case) ModelConfig() (models.Config, error) {
	var cfg models.Config
	d := json.NewDecoder(bytes.NewReader(c.Config))
	d.DisallowUnknownFields()
	if err := d.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("case %s: config: %w", c.Name, err)
	}
	return cfg, cfg.Validate()
}

// Batch is the case's rows in one batch, padded to the longest (width 1).
func (c *Case) Batch() *models.Batch {
	ex := make([]models.Example, len(c.Src))
	rows := make([]*models.Example, len(ex))
	for i := range ex {
		ex[i] = models.Example{ID: fmt.Sprint(i), Src: c.Src[i], Tgt: c.Tgt[i]}
		rows[i] = &ex[i]
	}
	return models.MakeBatch(rows, len(rows), 1)
}

// Real returns, for the batch's real target positions in row order, the
// rows [b*T+t] of a batch-major [B*T, n] tensor x.
func Real(x []float32, bt *models.Batch, n int) []float32 {
	var out []float32
	for b, e := range bt.Rows {
		for t := range e.Tgt {
			out = append(out, x[(b*bt.T+t)*n:(b*bt.T+t+1)*n]...)
		}
	}
	return out
}

// Fixture is a case's tensors: param.NAME (F32), grad.NAME and the
// outputs (F64).
type Fixture struct{ f *safetensors.File }

// Open reads the case's safetensors file in dir.
func (c *Case) Open(dir string) (*Fixture, error) {
	f, err := safetensors.ReadFile(filepath.Join(dir, c.Tensors))
	if err != nil {
		return nil, err
	}
	return &Fixture{f}, nil
}

// Float64s is tensor name, which must be F64.
func (fx *Fixture) Float64s(name string) ([]float64, error) {
	t, ok := fx.f.Get(name)
	if !ok {
		return nil, fmt.Errorf("fixture has no tensor %q", name)
	}
	if t.DType != safetensors.F64 {
		return nil, fmt.Errorf("tensor %q is %s, not F64", name, t.DType)
	}
	out := make([]float64, t.NumElements())
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return out, nil
}

// LoadParams sets p's weights to the fixture's param.* tensors: the names
// and shapes must be the same on both sides.
func (fx *Fixture) LoadParams(p *models.Params) error {
	var have []string
	for _, n := range fx.f.Names() {
		if name, ok := strings.CutPrefix(n, "param."); ok {
			have = append(have, name)
		}
	}
	want := append([]string(nil), p.Names...)
	sort.Strings(want)
	if strings.Join(have, " ") != strings.Join(want, " ") {
		return fmt.Errorf("fixture parameters %v, model parameters %v", have, want)
	}
	for i, name := range p.Names {
		t, _ := fx.f.Get("param." + name)
		if !models.SameShape(p.Values[i].Shape(), t.Shape) || t.DType != safetensors.F32 {
			return fmt.Errorf("parameter %s: fixture %s%v, model %v", name, t.DType, t.Shape, p.Values[i].Shape())
		}
		v, err := t.Float32s()
		if err != nil {
			return err
		}
		copy(p.Data(i), v)
	}
	return nil
}

// CheckGrads compares p's gradients with the fixture's grad.* tensors
// under b and returns the largest ratio to the tolerance. An attention key
// bias (".bk") has zero gradient in exact arithmetic, since softmax
// ignores a shift shared by a query's scores: its float32 gradient is the
// rounding of sums of the key gradients, whose scale is that of the key
// projection's gradient (the same key gradients times LayerNorm outputs of
// order one), so that is its scale.
func (fx *Fixture) CheckGrads(tb testing.TB, p *models.Params, b Bound) float64 {
	tb.Helper()
	worst := 0.0
	for i, name := range p.Names {
		want, err := fx.Float64s("grad." + name)
		if err != nil {
			tb.Fatal(err)
		}
		scale := 0.0
		if base, ok := strings.CutSuffix(name, ".bk"); ok {
			wk, err := fx.Float64s("grad." + base + ".wk")
			if err != nil {
				tb.Fatal(err)
			}
			scale = MaxAbs(wk)
		}
		worst = max(worst, b.Check(tb, "gradient of "+name, p.Grads[i], want, scale))
	}
	return worst
}
