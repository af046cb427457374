package ops

import (
	"fmt"

	"compbench/kernels"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SoftmaxCrossEntropy returns the mean cross-entropy between softmax(logits)
// and the targets, fused in one op so the [N, V] probabilities never exist in
// the forward pass. logits is [N, V]; targets is an int tensor [N] (fed each
// step with gorgonia.Let); rows whose target equals ignore (padding) count
// neither in the sum nor in the mean. With label smoothing eps the target
// distribution is (1-eps) one-hot + eps/V uniform over all V classes (the
// convention of PyTorch's CrossEntropyLoss; Shi et al. App. C leave it
// unspecified). A batch with no counted rows has loss 0 and zero gradient.
func SoftmaxCrossEntropy(logits, targets *G.Node, ignore int, smoothing float32) (*G.Node, error) {
	if logits.Dims() != 2 || targets.Dims() != 1 || targets.Shape()[0] != logits.Shape()[0] {
		return nil, fmt.Errorf("softmax cross-entropy: want logits [N,V] and targets [N]; got %v and %v", logits.Shape(), targets.Shape())
	}
	if targets.Dtype() != tensor.Int {
		return nil, fmt.Errorf("softmax cross-entropy: targets must be tensor.Int, got %v", targets.Dtype())
	}
	if smoothing < 0 || smoothing >= 1 {
		return nil, fmt.Errorf("softmax cross-entropy: label smoothing %g not in [0,1)", smoothing)
	}
	op := &sceOp{base(fmt.Sprintf("SoftmaxCE{%d,%g}", ignore, smoothing), 2), ignore, smoothing}
	return G.ApplyOp(op, logits, targets) // scalar
}

type sceOp struct {
	opBase
	ignore    int
	smoothing float32
}

func (o *sceOp) Type() hm.Type { return hm.NewFnType(tt(2), intT(1), tt(0)) }
func (o *sceOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return tensor.ScalarShape(), nil
}

// rows checks the inputs and returns logits, targets, V and the number of
// counted rows.
func (o *sceOp) rows(in []G.Value) (x []float32, t []int, v, count int, err error) {
	x, s, err := f32(in[0], "cross-entropy logits")
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if t, err = ints(in[1], "cross-entropy targets"); err != nil {
		return nil, nil, 0, 0, err
	}
	v = s[1]
	for i, ti := range t {
		if ti == o.ignore {
			continue
		}
		if ti < 0 || ti >= v {
			return nil, nil, 0, 0, fmt.Errorf("cross-entropy: target %d of row %d outside vocabulary [0,%d)", ti, i, v)
		}
		count++
	}
	return x, t, v, count, nil
}

func (o *sceOp) Do(in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, t, v, count, err := o.rows(in)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return G.NewF32(0), nil
	}
	// Per-row losses in parallel, summed in row order so the result does
	// not depend on the number of goroutines.
	losses := make([]float64, len(t))
	parallel(len(t), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if t[i] != o.ignore {
				losses[i] = kernels.SoftmaxCERowRef(o.smoothing, x[i*v:(i+1)*v], int32(t[i]))
			}
		}
	})
	var total float64
	for _, l := range losses {
		total += l
	}
	return G.NewF32(float32(total / float64(count))), nil
}

func (o *sceOp) DiffWRT(n int) []bool { return []bool{true, false} }
func (o *sceOp) SymDiff(in G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	g := &sceGradOp{base("Grad"+o.desc, 3), o}
	dx, err := G.ApplyOp(g, in[0], in[1], grad) // [N, V]
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, nil}, nil
}

// sceGradOp computes dlogits = dloss/count * (softmax - target distribution)
// on counted rows and 0 on ignored ones.
type sceGradOp struct {
	opBase
	fwd *sceOp
}

func (o *sceGradOp) Type() hm.Type { return hm.NewFnType(tt(2), intT(1), tt(0), tt(2)) }
func (o *sceGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	return in[0].(tensor.Shape).Clone(), nil
}
func (o *sceGradOp) Do(in ...G.Value) (G.Value, error) { return o.UsePreallocDo(nil, in...) }
func (o *sceGradOp) UsePreallocDo(pre G.Value, in ...G.Value) (G.Value, error) {
	if err := o.checkArity(len(in)); err != nil {
		return nil, err
	}
	x, t, v, count, err := o.fwd.rows(in[:2])
	if err != nil {
		return nil, err
	}
	dl, err := scalar32(in[2])
	if err != nil {
		return nil, fmt.Errorf("cross-entropy grad: %w", err)
	}
	n := len(t)
	res := o.out(pre, n, v) // [N, V]
	dx := res.Float32s()
	scale := dl / float32(count)
	parallel(n, n*v, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d := dx[i*v : (i+1)*v]
			if t[i] == o.fwd.ignore {
				clear(d)
				continue
			}
			kernels.SoftmaxCEGradRowRef(o.fwd.smoothing, scale, x[i*v:(i+1)*v], int32(t[i]), d)
		}
	})
	return res, nil
}
