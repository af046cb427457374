package pretrained

import (
	"math"
	"testing"

	"compbench/models"
)

// prefixState is the oracle of the cached decoder: Logits over each
// whole prefix (the full decoder graph), with Reorder permuting the
// histories.
type prefixState struct {
	e    *Engine
	mem  *models.Memory
	hist [][]int
}

func (p *prefixState) Step(tokens []int) ([]float32, error) {
	for b, t := range tokens {
		p.hist[b] = append(p.hist[b], t)
	}
	T := len(p.hist[0])
	in := make([]int, len(p.hist)*T)
	for b, h := range p.hist {
		copy(in[b*T:], h)
	}
	return p.e.Logits(p.mem, in, T, T-1)
}

func (p *prefixState) Reorder(from []int) {
	old := p.hist
	p.hist = make([][]int, len(old))
	for i, f := range from {
		p.hist[i] = append([]int(nil), old[f]...)
	}
}

// gamma is Higham's γ_n for float32.
func gamma(n int) float64 {
	u := math.Ldexp(1, -24)
	return float64(n) * u / (1 - float64(n)*u)
}

// TestStepMatchesDecoder: the cached decoder's next-token logits equal
// the full decoder graph's over the prefix at every position, through
// beam-style reorders, for each fixture. The two differ only in the order
// of the attention sums (the new position's term is added after the
// cached ones), so each logit may differ by 2·γ_n of its scale per sum it
// passes through: 30 per layer of either stack and 5 more, n the longest
// sum (width, feed-forward size or length), scale the larger of 1 and the
// largest logit.
func TestStepMatchesDecoder(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m, r, _, ex, _ := boundFixture(t, name)
			bt := oneBatch(ex)
			enc, err := r.Encode(bt.Src, bt.B, bt.S)
			if err != nil {
				t.Fatal(err)
			}
			mem := enc.Repeat(2) // two beams per source
			const steps = 6
			st, err := r.StartDecode(mem, steps)
			if err != nil {
				t.Fatal(err)
			}
			oracle := &prefixState{e: r, mem: mem, hist: make([][]int, mem.B)}
			c := m.Config()
			layers := c.NumLayers + c.NumDecoderLayers + c.EncoderLayers + c.DecoderLayers
			n := max(c.DModel, c.DFF, c.EncoderFFN, c.DecoderFFN, steps+2, mem.S)
			toks := make([]int, mem.B)
			for i := range toks {
				toks[i] = models.StartID
			}
			for step := 0; step < steps; step++ {
				got, err := st.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				want, err := oracle.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				scale := 1.0
				for _, w := range want {
					if !math.IsInf(float64(w), 0) {
						scale = math.Max(scale, math.Abs(float64(w)))
					}
				}
				tol := 2 * float64(30*layers+5) * gamma(n) * scale
				for i := range want {
					g, w := float64(got[i]), float64(want[i])
					if !(math.Abs(g-w) <= tol) && !(math.IsInf(w, -1) && math.IsInf(g, -1)) {
						t.Fatalf("step %d: logit %d is %v, the full decoder gives %v (tolerance %.2g)", step, i, g, w, tol)
					}
				}
				// Swap the beams of each source (and keep them from the
				// second step on): the caches follow their histories.
				from := make([]int, mem.B)
				for i := range from {
					from[i] = i ^ (step % 2)
				}
				st.Reorder(from)
				oracle.Reorder(from)
				for i := range toks {
					toks[i] = models.NumSpecials + 3 + (step+i)%5
				}
			}
		})
	}
}
