package ops

import (
	G "gorgonia.org/gorgonia"
)

// Kind names a compbench op for executors that run a graph themselves (the
// engine package): they read an op's parameters through Inspect instead of
// calling its Do.
type Kind int

// The op kinds Inspect reports.
const (
	KindUnknown Kind = iota
	KindDropout
	KindDropoutGrad
	KindEmbed
	KindEmbedGrad
	KindRelBias
	KindRelBiasGrad
	KindLayerNorm
	KindLayerNormGradX
	KindLayerNormGradGamma
	KindLayerNormGradBeta // also the bias gradient of AddBias and Linear
	KindAttnScores
	KindAttnScoresGradQ
	KindAttnScoresGradK
	KindAttnValues
	KindAttnValuesGradP
	KindAttnValuesGradV
	KindAttnSoftmax
	KindAttnSoftmaxGrad
	KindSumTo
	KindSoftmaxCE
	KindSoftmaxCEGrad
	KindGELU
	KindGELUGrad
	KindReLU
	KindReLUGrad
	KindAdd
	KindAddBias
	KindLinear
	KindLinearGradX
	KindLinearGradW
	KindGELUErf
	KindGELUErfGrad
	KindRMSNorm
	KindRMSNormGradX
	KindRMSNormGradGamma
)

var kindNames = [...]string{"Unknown", "Dropout", "DropoutGrad", "Embed", "EmbedGrad", "RelBias", "RelBiasGrad",
	"LayerNorm", "LayerNormGradX", "LayerNormGradGamma", "LayerNormGradBeta",
	"AttnScores", "AttnScoresGradQ", "AttnScoresGradK", "AttnValues", "AttnValuesGradP", "AttnValuesGradV",
	"AttnSoftmax", "AttnSoftmaxGrad", "SumTo", "SoftmaxCE", "SoftmaxCEGrad", "GELU", "GELUGrad", "ReLU", "ReLUGrad",
	"Add", "AddBias", "Linear", "LinearGradX", "LinearGradW", "GELUErf", "GELUErfGrad",
	"RMSNorm", "RMSNormGradX", "RMSNormGradGamma"}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "Kind(?)"
	}
	return kindNames[k]
}

// HeadGeom is the geometry of the per-head attention products: batch B,
// heads H, query and key lengths Tq and Tk, model width D (head width D/H);
// Cache marks keys and values held position-major (CacheScores,
// kernels.CacheGemm).
type HeadGeom struct {
	B, H, Tq, Tk, D int
	Cache           bool
}

// Info holds the parameters of one compbench op; only the fields of its Kind
// are set.
type Info struct {
	// Kind is the op.
	Kind Kind
	// P is the drop probability (Dropout, DropoutGrad).
	P float32
	// DropID is the op number within its source (Dropout, DropoutGrad):
	// DropoutGrad reports the number of its forward op.
	DropID int
	// Drop is the source driving the masks (Dropout, DropoutGrad); read
	// its Seed, Step and Training at run time.
	Drop *DropoutSource
	// Eps is the LayerNorm variance floor.
	Eps float32
	// Rows and Cols are the table shape [V, D] of Embed/EmbedGrad, or
	// [NB, H] of RelBias/RelBiasGrad.
	Rows, Cols int
	// Buckets, Tq and Tk are RelBias's bucket per (query, key) and its
	// lengths.
	Buckets []int
	Tq, Tk  int
	// Geom and Scale describe the attention products.
	Geom  HeadGeom
	Scale float32
	// HasMask and HasBias say which addends AttnSoftmax takes after the
	// scores (mask first).
	HasMask, HasBias bool
	// Shape is SumTo's output shape.
	Shape []int
	// Ignore and Smoothing are SoftmaxCE's ignored target and label
	// smoothing (SoftmaxCEGrad reports its forward op's).
	Ignore    int
	Smoothing float32
	// N, In, Out are Linear's sizes (x [N, In], w [In, Out]); LinearBias
	// says whether the forward op takes a bias.
	N, In, Out int
	LinearBias bool
}

// Inspect reports the kind and parameters of a compbench op; ok is false for
// any other op.
func Inspect(op G.Op) (info Info, ok bool) {
	switch o := op.(type) {
	case *dropoutOp:
		return Info{Kind: KindDropout, P: o.p, DropID: o.id, Drop: o.src}, true
	case *dropoutGradOp:
		return Info{Kind: KindDropoutGrad, P: o.fwd.p, DropID: o.fwd.id, Drop: o.fwd.src}, true
	case *gatherOp:
		k := KindEmbed
		if o.grad {
			k = KindEmbedGrad
		}
		return Info{Kind: k, Rows: o.v, Cols: o.d}, true
	case *relBiasOp:
		k := KindRelBias
		if o.grad {
			k = KindRelBiasGrad
		}
		return Info{Kind: k, Rows: o.nb, Cols: o.h, Buckets: o.buckets, Tq: o.tq, Tk: o.tk}, true
	case *layerNormOp:
		return Info{Kind: KindLayerNorm, Eps: o.eps}, true
	case *layerNormGradX:
		return Info{Kind: KindLayerNormGradX, Eps: o.eps}, true
	case *layerNormGradParams:
		if o.gamma {
			return Info{Kind: KindLayerNormGradGamma, Eps: o.eps}, true
		}
		return Info{Kind: KindLayerNormGradBeta}, true
	case *headOp:
		k := [...]Kind{KindAttnScores, KindAttnScoresGradQ, KindAttnScoresGradK, KindAttnValues, KindAttnValuesGradP, KindAttnValuesGradV}[o.kind]
		return Info{Kind: k, Geom: HeadGeom{o.g.b, o.g.h, o.g.tq, o.g.tk, o.g.d, o.g.cache}, Scale: o.scale}, true
	case *attnSoftmaxOp:
		return Info{Kind: KindAttnSoftmax, HasMask: o.hasMask, HasBias: o.hasBias}, true
	case *softmaxGradOp:
		return Info{Kind: KindAttnSoftmaxGrad}, true
	case *sumToOp:
		return Info{Kind: KindSumTo, Shape: []int(o.shape.Clone())}, true
	case *sceOp:
		return Info{Kind: KindSoftmaxCE, Ignore: o.ignore, Smoothing: o.smoothing}, true
	case *sceGradOp:
		return Info{Kind: KindSoftmaxCEGrad, Ignore: o.fwd.ignore, Smoothing: o.fwd.smoothing}, true
	case *rmsNormOp:
		return Info{Kind: [...]Kind{KindRMSNorm, KindRMSNormGradX, KindRMSNormGradGamma}[o.part], Eps: o.eps}, true
	case *geluOp:
		switch {
		case o.erf && o.grad:
			return Info{Kind: KindGELUErfGrad}, true
		case o.erf:
			return Info{Kind: KindGELUErf}, true
		case o.grad:
			return Info{Kind: KindGELUGrad}, true
		}
		return Info{Kind: KindGELU}, true
	case *reluOp:
		if o.grad {
			return Info{Kind: KindReLUGrad}, true
		}
		return Info{Kind: KindReLU}, true
	case *addOp:
		return Info{Kind: KindAdd}, true
	case *addBiasOp:
		return Info{Kind: KindAddBias}, true
	case *linearOp:
		k := [...]Kind{KindLinear, KindLinearGradX, KindLinearGradW}[o.kind]
		return Info{Kind: k, N: o.n, In: o.nin, Out: o.nout, LinearBias: o.kind == linFwd && o.arity == 3}, true
	}
	return Info{}, false
}

// Seed is the seed every mask of the source derives from.
func (s *DropoutSource) Seed() uint64 { return s.seed }

// Step is the training step whose masks the source draws.
func (s *DropoutSource) Step() uint64 { return s.step }

// Training says whether dropout is on.
func (s *DropoutSource) Training() bool { return s.training }

// DropChunk is the number of elements that share one random stream in
// Dropout's masks.
const DropChunk = dropChunk
