package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	"gonum.org/v1/gonum/blas"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The per-head products of multi-head attention work directly on the
// [B*T, D] projections, where head h of batch b is the [T, D/H] block at rows
// b*T.. and columns h*D/H.. with row stride D. Calling BLAS with that stride
// replaces the reshape/transpose copies of a [B, H, T, D/H] layout.

// AttnScores returns scale * Q K^T per batch element and head: q is
// [B*Tq, D], k is [B*Tk, D], the result [B, H, Tq, Tk].
func AttnScores(q, k *G.Node, batch, heads int, scale float32) (*G.Node, error) {
	g, err := newHeadGeom(q, k, batch, heads)
	if err != nil {
		return nil, fmt.Errorf("attention scores: %w", err)
	}
	return G.ApplyOp(newHeadOp(kindScores, g, scale), q, k) // [B, H, Tq, Tk]
}

// AttnValues returns P V per batch element and head, heads side by side:
// p is [B, H, Tq, Tk], v is [B*Tk, D], the result [B*Tq, D].
func AttnValues(p, v *G.Node, heads int) (*G.Node, error) {
	ps := p.Shape()
	if p.Dims() != 4 || ps[1] != heads {
		return nil, fmt.Errorf("attention values: probabilities must be [B,%d,Tq,Tk], got %v", heads, ps)
	}
	g := headGeom{b: ps[0], h: heads, tq: ps[2], tk: ps[3]}
	if v.Dims() != 2 || v.Shape()[0] != g.b*g.tk || v.Shape()[1]%heads != 0 {
		return nil, fmt.Errorf("attention values: values must be [%d, D] with D divisible by %d, got %v", g.b*g.tk, heads, v.Shape())
	}
	g.d = v.Shape()[1]
	return G.ApplyOp(newHeadOp(kindValues, g, 1), p, v) // [B*Tq, D]
}

// CacheScores is AttnScores over keys k [Tk*B, D] held position-major
// (key j of row b at row j*B + b), the layout of a decoding cache, which
// grows by B rows per position; the result is [B, H, Tq, Tk]. It has no
// gradient.
func CacheScores(q, k *G.Node, batch, heads int, scale float32) (*G.Node, error) {
	g, err := newHeadGeom(q, k, batch, heads)
	if err != nil {
		return nil, fmt.Errorf("cache scores: %w", err)
	}
	g.cache = true
	return G.ApplyOp(newHeadOp(kindScores, g, scale), q, k) // [B, H, Tq, Tk]
}

// CacheValues is AttnValues over values v [Tk*B, D] held position-major,
// as CacheScores' keys; the result is [B*Tq, D]. It has no gradient.
func CacheValues(p, v *G.Node, heads int) (*G.Node, error) {
	ps := p.Shape()
	if p.Dims() != 4 || ps[1] != heads || v.Dims() != 2 || v.Shape()[0] != ps[0]*ps[3] || v.Shape()[1]%heads != 0 {
		return nil, fmt.Errorf("cache values: want p [B,%d,Tq,Tk] and v [Tk*B, D], got %v and %v", heads, ps, v.Shape())
	}
	g := headGeom{b: ps[0], h: heads, tq: ps[2], tk: ps[3], d: v.Shape()[1], cache: true}
	return G.ApplyOp(newHeadOp(kindValues, g, 1), p, v) // [B*Tq, D]
}

// headGeom is the geometry shared by the products and their gradients;
// cache marks keys and values held position-major (CacheScores).
type headGeom struct {
	b, h, tq, tk, d int
	cache           bool
}

func (g headGeom) dk() int { return g.d / g.h }

func newHeadGeom(q, k *G.Node, batch, heads int) (headGeom, error) {
	qs, ks := q.Shape(), k.Shape()
	if q.Dims() != 2 || k.Dims() != 2 || qs[1] != ks[1] {
		return headGeom{}, fmt.Errorf("want q [B*Tq, D] and k [B*Tk, D], got %v and %v", qs, ks)
	}
	if batch <= 0 || heads <= 0 || qs[0]%batch != 0 || ks[0]%batch != 0 || qs[1]%heads != 0 {
		return headGeom{}, fmt.Errorf("shapes %v, %v do not split into batch %d and %d heads", qs, ks, batch, heads)
	}
	return headGeom{b: batch, h: heads, tq: qs[0] / batch, tk: ks[0] / batch, d: qs[1]}, nil
}

// headKind is one of the six per-head products; kernels.AttnGemm holds
// their geometry (which operand is transposed, strides and offsets).
type headKind = kernels.AttnKind

const (
	kindScores      = kernels.AttnScores      // (q, k) -> S = scale q k^T      [B,H,Tq,Tk]
	kindScoresGradQ = kernels.AttnScoresGradQ // (dS, k) -> dq = scale dS k     [B*Tq, D]
	kindScoresGradK = kernels.AttnScoresGradK // (dS, q) -> dk = scale dS^T q   [B*Tk, D]
	kindValues      = kernels.AttnValues      // (p, v) -> o = p v              [B*Tq, D]
	kindValuesGradP = kernels.AttnValuesGradP // (dO, v) -> dP = dO v^T         [B,H,Tq,Tk]
	kindValuesGradV = kernels.AttnValuesGradV // (p, dO) -> dv = p^T dO         [B*Tk, D]
)

var headKindNames = [...]string{"AttnScores", "AttnScoresGradQ", "AttnScoresGradK", "AttnValues", "AttnValuesGradP", "AttnValuesGradV"}

type headOp struct {
	opBase
	kind  headKind
	g     headGeom
	scale float32
}

func newHeadOp(kind headKind, g headGeom, scale float32) *headOp {
	return &headOp{base(fmt.Sprintf("%s{%v,%g}", headKindNames[kind], g, scale), 2), kind, g, scale}
}

func (o *headOp) outShape() tensor.Shape {
	g := o.g
	switch o.kind {
	case kindScores, kindValuesGradP:
		return tensor.Shape{g.b, g.h, g.tq, g.tk}
	case kindScoresGradK, kindValuesGradV:
		return tensor.Shape{g.b * g.tk, g.d}
	default:
		return tensor.Shape{g.b * g.tq, g.d}
	}
}

func (o *headOp) Type() hm.Type {
	dims := func(i int) int {
		switch {
		case i == 0 && (o.kind == kindScoresGradQ || o.kind == kindScoresGradK || o.kind == kindValues || o.kind == kindValuesGradV):
			return 4
		default:
			return 2
		}
	}
	return hm.NewFnType(tt(dims(0)), tt(dims(1)), tt(o.outShape().Dims()))
}
func (o *headOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) { return o.outShape(), nil }
func (o *headOp) Do(in ...G.Value) (G.Value, error)                 { return o.UsePreallocDo(nil, in...) }

func (o *headOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	a, _, err := f32(in[0], o.desc)
	if err != nil {
		return nil, err
	}
	b, _, err := f32(in[1], o.desc)
	if err != nil {
		return nil, err
	}
	res := o.out(pre, o.outShape()...)
	c := res.Float32s()
	g := o.g
	// The same geometry as the GPU's strided-batched GEMM, products run
	// through BLAS (faster than kernels.GemmRef, not bit-identical to it).
	p := kernels.AttnGemm(o.kind, g.b, g.h, g.tq, g.tk, g.d, o.scale)
	if g.cache {
		p = kernels.CacheGemm(p, g.b, g.d)
	}
	if err := p.Validate(len(a), len(b), len(c)); err != nil {
		return nil, fmt.Errorf("%s: %w", o.desc, err)
	}
	tr := func(t bool) blas.Transpose {
		if t {
			return blas.Trans
		}
		return blas.NoTrans
	}
	ta, tb := tr(p.TransA), tr(p.TransB)
	impl := G.WhichBLAS()
	parallel(g.b*g.h, g.b*g.h*g.tq*g.tk*g.dk(), func(lo, hi int) {
		for bh := lo; bh < hi; bh++ {
			i, j := bh/g.h, bh%g.h
			oa, ob, oc := p.Offsets(i, j)
			impl.Sgemm(ta, tb, p.M, p.N, p.K, p.Alpha, a[oa:], p.LdA, b[ob:], p.LdB, 0, c[oc:], p.LdC)
		}
	})
	return res, nil
}

func (o *headOp) DiffWRT(n int) []bool { return []bool{true, true} }

func (o *headOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.g.cache {
		return nil, fmt.Errorf("%s: products over a decoding cache have no gradient", o.desc)
	}
	var k1, k2 headKind
	var a1, b1, a2, b2 *G.Node
	switch o.kind {
	case kindScores: // in = (q, k)
		k1, a1, b1 = kindScoresGradQ, grad, in[1]
		k2, a2, b2 = kindScoresGradK, grad, in[0]
	case kindValues: // in = (p, v)
		k1, a1, b1 = kindValuesGradP, grad, in[1]
		k2, a2, b2 = kindValuesGradV, in[0], grad
	default:
		return nil, fmt.Errorf("%s: second derivative not implemented", o.desc)
	}
	d1, err := G.ApplyOp(newHeadOp(k1, o.g, o.scale), a1, b1) // shape of in[0]
	if err != nil {
		return nil, err
	}
	d2, err := G.ApplyOp(newHeadOp(k2, o.g, o.scale), a2, b2) // shape of in[1]
	if err != nil {
		return nil, err
	}
	return G.Nodes{d1, d2}, nil
}
