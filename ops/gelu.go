package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GELU applies the tanh approximation of the Gaussian error linear unit
// (Hendrycks & Gimpel 2016, as GPT-2 uses it) elementwise to x of any shape:
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float32
// (kernels.GELURef).
func GELU(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(&geluOp{base("GELU", 1), false, false}, x) // same shape as x
}

// GELUExact applies the exact Gaussian error linear unit x·Φ(x) =
// 0.5 x (1 + erf(x/√2)) elementwise (BART's "gelu"; kernels.GELUErfRef).
func GELUExact(x *G.Node) (*G.Node, error) {
	return G.ApplyOp(&geluOp{base("GELUErf", 1), false, true}, x) // same shape as x
}

// geluOp is the forward op, or with grad set the backward op taking (x,
// dy); erf selects the exact form over the tanh approximation.
type geluOp struct {
	opBase
	grad, erf bool
}

func (o *geluOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	if o.grad {
		return hm.NewFnType(a, a, a)
	}
	return hm.NewFnType(a, a)
}
func (o *geluOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *geluOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *geluOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, s, err := f32(in[0], "gelu x")
	if err != nil {
		return nil, err
	}
	var dy []float32
	if o.grad {
		if dy, _, err = f32(in[1], "gelu dy"); err != nil {
			return nil, err
		}
	}
	res := o.out(pre, s...) // same shape as x
	y := res.Float32s()
	parallel(len(x), 8*len(x), func(lo, hi int) {
		if o.grad {
			if o.erf {
				kernels.GELUErfGradRef(hi-lo, x[lo:hi], dy[lo:hi], y[lo:hi])
				return
			}
			kernels.GELUGradRef(hi-lo, x[lo:hi], dy[lo:hi], y[lo:hi])
		} else {
			if o.erf {
				kernels.GELUErfRef(hi-lo, x[lo:hi], y[lo:hi])
				return
			}
			kernels.GELURef(hi-lo, x[lo:hi], y[lo:hi])
		}
	})
	return res, nil
}

func (o *geluOp) DiffWRT(n int) []bool { return []bool{true} }
func (o *geluOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if o.grad {
		return nil, fmt.Errorf("gelu: second derivative not implemented")
	}
	name := "GELUGrad"
	if o.erf {
		name = "GELUErfGrad"
	}
	dx, err := G.ApplyOp(&geluOp{base(name, 2), true, o.erf}, in[0], grad) // same shape as x
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}
