package engine

import (
	"fmt"
	"reflect"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/kernels"
	"compbench/ops"
)

// Options steer compilation.
type Options struct {
	// Inputs are the input nodes fed per run (batch data). Other float
	// input nodes are parameters; integer input nodes are always inputs.
	Inputs []*G.Node
}

// Compile turns the part of roots' graph that roots depend on into a
// Program: nodes in Gorgonia's topological order, each mapped to one step.
// Reshapes become aliases of their input's buffer; constants and SizeOf
// are folded. An op the engine has no kernel for is an error naming it:
// nothing falls back to another executor.
func Compile(roots []*G.Node, o Options) (*Program, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("compile: no roots")
	}
	g := roots[0].Graph()
	for _, r := range roots {
		if r == nil || r.Graph() != g {
			return nil, fmt.Errorf("compile: roots must be non-nil nodes of one graph")
		}
	}
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	// G.Sort puts each node before its inputs.
	for i, j := 0, len(sorted)-1; i < j; i, j = i+1, j-1 {
		sorted[i], sorted[j] = sorted[j], sorted[i]
	}
	need := map[*G.Node]bool{}
	var mark func(n *G.Node)
	mark = func(n *G.Node) {
		if need[n] {
			return
		}
		need[n] = true
		for _, c := range children(g, n) {
			mark(c)
		}
	}
	for _, r := range roots {
		mark(r)
	}
	inputs := map[*G.Node]bool{}
	for _, n := range o.Inputs {
		inputs[n] = true
	}
	c := &compiler{g: g, p: &Program{nodeBuf: map[*G.Node]int{}, Roots: roots}, scalars: map[*G.Node]float64{}, masks: map[dropKey]int{}}
	for _, n := range sorted {
		if !need[n] {
			continue
		}
		if err := c.node(n, inputs[n]); err != nil {
			return nil, fmt.Errorf("compile: node %v: %w", n, err)
		}
	}
	for _, r := range roots {
		id, ok := c.p.nodeBuf[r]
		if !ok {
			return nil, fmt.Errorf("compile: root %v is a folded scalar; ask for a tensor", r)
		}
		if c.p.Bufs[id].Class == Activation {
			c.p.Bufs[id].Class = Output
		}
	}
	plan(c.p)
	return c.p, nil
}

func children(g *G.ExprGraph, n *G.Node) []*G.Node {
	it := g.From(n.ID())
	var out []*G.Node
	for it.Next() {
		out = append(out, it.Node().(*G.Node))
	}
	return out
}

type compiler struct {
	g *G.ExprGraph
	p *Program
	// scalars are folded compile-time values (constants, SizeOf).
	scalars map[*G.Node]float64
	// masks are the mask buffers of the dropout ops compiled so far.
	masks map[dropKey]int
}

func (c *compiler) newBuf(n *G.Node, class Class) (int, error) {
	b := Buffer{Name: n.Name(), Class: class, Shape: []int(n.Shape()), Size: max(1, n.Shape().TotalSize()), Def: -1, LastUse: -1, Node: n}
	switch n.Dtype() {
	case tensor.Float32:
	case tensor.Int, tensor.Int32, tensor.Int64:
		if class == Activation {
			return 0, fmt.Errorf("integer-valued op results are not supported")
		}
		b.Int = true
	default:
		return 0, fmt.Errorf("dtype %v not supported (float32 and int only)", n.Dtype())
	}
	c.p.Bufs = append(c.p.Bufs, b)
	id := len(c.p.Bufs) - 1
	c.p.nodeBuf[n] = id
	return id, nil
}

// constValue reads a scalar constant node's value.
func constValue(n *G.Node) (float64, bool) {
	switch v := n.Value().(type) {
	case *G.F32:
		return float64(*v), true
	case *G.F64:
		return float64(*v), true
	case *G.I:
		return float64(*v), true
	}
	return 0, false
}

// field reads an unexported integer field of a gorgonia op (repeatOp.along,
// sizeOp.axis, sumOp.along): these carry no exported accessor.
func field(op G.Op, name string) (reflect.Value, bool) {
	v := reflect.ValueOf(op)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.FieldByName(name)
	return f, f.IsValid()
}

func (c *compiler) node(n *G.Node, isInput bool) error {
	op := n.Op()
	if op == nil {
		class := Param
		if isInput || n.Dtype() != tensor.Float32 {
			class = Input
		}
		_, err := c.newBuf(n, class)
		return err
	}
	in := children(c.g, n)
	typ := fmt.Sprintf("%T", op)
	switch typ {
	case "gorgonia.constantScalar":
		v, ok := constValue(n)
		if !ok {
			return fmt.Errorf("constant of type %T not supported", n.Value())
		}
		c.scalars[n] = v
		return nil
	case "gorgonia.sizeOp":
		ax, ok := field(op, "axis")
		if !ok || len(in) != 1 {
			return fmt.Errorf("SizeOf: unexpected form")
		}
		s := in[0].Shape()
		if int(ax.Int()) >= len(s) {
			return fmt.Errorf("SizeOf axis %d of shape %v", ax.Int(), s)
		}
		c.scalars[n] = float64(s[ax.Int()])
		return nil
	case "gorgonia.reshapeOp":
		id, ok := c.p.nodeBuf[in[0]]
		if !ok {
			return fmt.Errorf("reshape of a folded scalar")
		}
		c.p.nodeBuf[n] = id // a view: same elements, same order
		return nil
	}
	st := Step{Node: n, Aux: -1}
	used, err := c.lower(&st, typ, op, n, in)
	if err != nil {
		return err
	}
	for k, x := range in {
		if !used[k] {
			continue
		}
		id, ok := c.p.nodeBuf[x]
		if !ok {
			return fmt.Errorf("input %v has no buffer", x)
		}
		st.In = append(st.In, id)
		st.InShapes = append(st.InShapes, x.Shape())
	}
	out, err := c.newBuf(n, Activation)
	if err != nil {
		return err
	}
	st.Out = out
	if st.Op == OpCompbench && st.Info.Kind == ops.KindDropout {
		st.Aux = c.aux(n, "mask")
		c.masks[dropKey{st.Info.Drop, st.Info.DropID}] = st.Aux
	}
	if st.Op == OpCompbench && st.Info.Kind == ops.KindDropoutGrad {
		mask, ok := c.masks[dropKey{st.Info.Drop, st.Info.DropID}]
		if !ok {
			return fmt.Errorf("dropout gradient before its forward op")
		}
		st.In = append(st.In, mask)
	}
	if st.Op == OpCompbench {
		c.bound(&st)
	}
	if st.Op == OpCompbench && (st.Info.Kind == ops.KindRelBias || st.Info.Kind == ops.KindRelBiasGrad) {
		st.In = append(st.In, c.intConst(n, st.Info.Buckets))
	}
	c.p.Steps = append(c.p.Steps, st)
	return nil
}

// bound records the id range of the integer inputs of st, so Machine.Set
// refuses out-of-range ids instead of a kernel reading outside a table.
func (c *compiler) bound(st *Step) {
	lim, ignore := 0, false
	switch st.Info.Kind {
	case ops.KindEmbed, ops.KindEmbedGrad:
		lim = st.Info.Rows
	case ops.KindSoftmaxCE, ops.KindSoftmaxCEGrad:
		lim, ignore = c.p.Bufs[st.In[0]].Shape[1], true
	default:
		return
	}
	b := &c.p.Bufs[st.In[1]]
	if b.IDLimit == 0 || lim < b.IDLimit {
		b.IDLimit = lim
	}
	if ignore {
		b.Ignore, b.HasIgnore = int32(st.Info.Ignore), true
	}
}

type dropKey struct {
	src *ops.DropoutSource
	id  int
}

// aux adds an activation buffer of n's shape that no node names.
func (c *compiler) aux(n *G.Node, what string) int {
	c.p.Bufs = append(c.p.Bufs, Buffer{Name: fmt.Sprintf("%s.%s", n.Name(), what), Class: Activation,
		Shape: []int(n.Shape()), Size: n.Shape().TotalSize(), Def: -1, LastUse: -1, Node: n})
	return len(c.p.Bufs) - 1
}

// intConst adds a Const buffer holding v as int32.
func (c *compiler) intConst(n *G.Node, v []int) int {
	d := make([]int32, len(v))
	for i, x := range v {
		d[i] = int32(x)
	}
	c.p.Bufs = append(c.p.Bufs, Buffer{Name: n.Name() + ".buckets", Class: Const, Int: true, Shape: []int{len(v)}, Size: len(v), Ints: d, Def: -1, LastUse: -1})
	return len(c.p.Bufs) - 1
}

// scalarBuf turns folded scalar x into a one-element Const buffer.
func (c *compiler) scalarBuf(x *G.Node) {
	if _, ok := c.p.nodeBuf[x]; ok {
		return
	}
	c.p.Bufs = append(c.p.Bufs, Buffer{Name: x.Name(), Class: Const, Shape: []int{1}, Size: 1, Value: float32(c.scalars[x]), Def: -1, LastUse: -1, Node: x})
	c.p.nodeBuf[x] = len(c.p.Bufs) - 1
}

// lower fills st for node n with inputs in and reports which inputs the
// step reads from buffers (the others are folded into its parameters).
func (c *compiler) lower(st *Step, typ string, op G.Op, n *G.Node, in []*G.Node) ([]bool, error) {
	shape := n.Shape()
	used := make([]bool, len(in))
	for k, x := range in {
		_, folded := c.scalars[x]
		used[k] = !folded
	}
	if info, ok := ops.Inspect(op); ok {
		g := info.Geom
		switch info.Kind {
		case ops.KindAttnScores, ops.KindAttnScoresGradQ, ops.KindAttnScoresGradK,
			ops.KindAttnValues, ops.KindAttnValuesGradP, ops.KindAttnValuesGradV:
			k := kernels.AttnKind(info.Kind - ops.KindAttnScores)
			st.Op, st.Gemm = OpGemm, kernels.AttnGemm(k, g.B, g.H, g.Tq, g.Tk, g.D, info.Scale)
			if g.Cache {
				st.Gemm = kernels.CacheGemm(st.Gemm, g.B, g.D)
			}
			return used, nil
		case ops.KindLinear:
			x, w := in[0].Shape(), in[1].Shape()
			st.Op, st.Gemm = OpLinear, plainGemm(false, false, x[0], w[1], x[1])
			if info.LinearBias {
				st.Gemm.Beta = 1
			}
			return used, nil
		case ops.KindLinearGradX: // (dy [N,Out], w [In,Out]) -> dy wᵀ
			st.Op, st.Gemm = OpGemm, plainGemm(false, true, info.N, info.In, info.Out)
			return used, nil
		case ops.KindLinearGradW: // (x [N,In], dy [N,Out]) -> xᵀ dy
			st.Op, st.Gemm = OpGemm, plainGemm(true, false, info.In, info.Out, info.N)
			return used, nil
		}
		st.Op, st.Info = OpCompbench, info
		st.Sizes[0] = shape.TotalSize()
		for k, x := range in {
			if !used[k] {
				// SoftmaxCEGrad's incoming gradient is the constant 1
				// in a training graph: kernels read it from memory.
				if info.Kind != ops.KindSoftmaxCEGrad {
					return nil, fmt.Errorf("%s: unexpected constant input", info.Kind)
				}
				c.scalarBuf(x)
				used[k] = true
			}
		}
		return used, nil
	}
	s := op.String()
	switch typ {
	case "gorgonia.linAlgBinOp":
		if len(in) != 2 || in[0].Dims() != 2 || in[1].Dims() != 2 {
			return nil, fmt.Errorf("%s: only matrix × matrix is supported", s)
		}
		a, b := in[0].Shape(), in[1].Shape()
		var ta, tb bool
		switch s {
		case "A × B":
		case "Aᵀ × B":
			ta = true
		case "A × Bᵀ":
			tb = true
		case "Aᵀ × Bᵀ":
			ta, tb = true, true
		default:
			return nil, fmt.Errorf("linear-algebra op %q not supported", s)
		}
		m, k := a[0], a[1]
		if ta {
			m, k = k, m
		}
		nn := b[1]
		if tb {
			nn = b[0]
		}
		st.Op, st.Gemm = OpGemm, plainGemm(ta, tb, m, nn, k)
		return used, nil
	case "gorgonia.elemBinOp":
		sym, retSame, _ := strings.Cut(s, " ")
		bin, ok := map[string]kernels.BinOp{"+": kernels.OpAdd, "-": kernels.OpSub, "⊙": kernels.OpMul, "÷": kernels.OpDiv, ">=": kernels.OpGreaterEq}[sym]
		if !ok || (bin == kernels.OpGreaterEq && retSame != "true") || len(in) != 2 {
			return nil, fmt.Errorf("elementwise op %q not supported", s)
		}
		size := shape.TotalSize()
		for k, x := range in {
			switch xs := x.Shape().TotalSize(); {
			case x.IsScalar() || xs == 1 && size != 1:
				st.Strides[k] = 0
			case xs == size:
				st.Strides[k] = 1
			default:
				return nil, fmt.Errorf("elementwise op %q on shapes %v: broadcasting other than scalar is not supported", s, shapes(in))
			}
			if !used[k] {
				c.scalarBuf(x)
				used[k] = true
			}
		}
		st.Op, st.Bin, st.Sizes[0] = OpBinary, bin, size
		return used, nil
	case "*gorgonia.repeatOp", "gorgonia.repeatOp":
		along, ok := field(op, "along")
		if !ok || !used[0] {
			return nil, fmt.Errorf("%s: unexpected form", s)
		}
		if along.Int() != 0 || len(shape) != 2 || in[0].Shape().TotalSize() != shape[1] {
			return nil, fmt.Errorf("%s: only repeating a row along axis 0 is supported (%v -> %v)", s, in[0].Shape(), shape)
		}
		for k := 1; k < len(in); k++ {
			used[k] = false // the repeat count is the output shape
		}
		st.Op, st.Sizes = OpRepeat, [2]int{shape[0], shape[1]}
		return used, nil
	case "gorgonia.sumOp":
		along, ok := field(op, "along")
		if !ok || along.Len() != 1 || len(in) != 1 {
			return nil, fmt.Errorf("%s: only a sum along one axis is supported", s)
		}
		is := in[0].Shape()
		if along.Index(0).Int() != 0 || len(is) != 2 {
			return nil, fmt.Errorf("%s: only a sum over the rows of a matrix is supported, got axis %d of %v", s, along.Index(0).Int(), is)
		}
		st.Op, st.Sizes = OpSum, [2]int{is[0], is[1]}
		return used, nil
	case "gorgonia.transposeOp":
		is := in[0].Shape()
		if len(is) != 2 || len(in) != 1 {
			return nil, fmt.Errorf("%s: only 2-D transposes are supported, got %v", s, is)
		}
		st.Op, st.Sizes = OpTranspose, [2]int{is[0], is[1]}
		return used, nil
	}
	return nil, fmt.Errorf("op %s (%s) has no engine kernel", typ, s)
}

func shapes(ns []*G.Node) []tensor.Shape {
	var out []tensor.Shape
	for _, n := range ns {
		out = append(out, n.Shape())
	}
	return out
}

// plainGemm is one row-major product op(A) [m,k] × op(B) [k,n] -> [m,n]
// with packed operands.
func plainGemm(ta, tb bool, m, n, k int) kernels.GemmParams {
	g := kernels.GemmParams{TransA: ta, TransB: tb, M: m, N: n, K: k, Alpha: 1, LdA: k, LdB: n, LdC: n}
	if ta {
		g.LdA = m
	}
	if tb {
		g.LdB = k
	}
	return g
}
