package engine

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/kernels"
	"compbench/ops"
)

// Op is what one step computes.
type Op int

// The step ops. OpCompbench runs the compbench op named by the step's Info.Kind.
const (
	OpGemm      Op = iota // C = alpha op(A) op(B), batched; Step.Gemm
	OpLinear              // ops.Linear forward: C = x W, after bias rows when it has a bias
	OpBinary              // y = a op b elementwise (Step.Bin), stride 0 broadcasting a scalar
	OpRepeat              // y [N, D] = b [D] on every row (Gorgonia's Repeat along axis 0)
	OpSum                 // y [D] = sum of the rows of x [N, D] (Gorgonia's Σ along axis 0)
	OpTranspose           // y [C, R] = xᵀ for x [R, C]
	OpCompbench           // a compbench op (package ops)
)

var opNames = [...]string{"Gemm", "Linear", "Binary", "Repeat", "Sum", "Transpose", "Compbench"}

func (o Op) String() string {
	if o < 0 || int(o) >= len(opNames) {
		return "Op(?)"
	}
	return opNames[o]
}

// Step is one kernel call of a Program.
type Step struct {
	// Op is the computation; Info the compbench op's parameters (OpCompbench).
	Op   Op
	Info ops.Info
	// In are the input buffer ids, Out the output's; Aux is a second output
	// (Dropout's mask, read by its DropoutGrad) or -1.
	In       []int
	Out, Aux int
	// InShapes are the shapes of the graph inputs behind In, in order: a
	// reshaped input's buffer keeps the shape of the node that made it.
	InShapes []tensor.Shape
	// Gemm is the product of OpGemm and OpLinear.
	Gemm kernels.GemmParams
	// Bin and Strides are OpBinary's operation and operand strides.
	Bin     kernels.BinOp
	Strides [2]int
	// Sizes are (rows, cols) of OpRepeat, OpSum and OpTranspose; Sizes[0]
	// is the element count of elementwise ops.
	Sizes [2]int
	// Node is the graph node the step computes (for messages).
	Node *G.Node
}

func (s *Step) String() string {
	name := s.Op.String()
	switch s.Op {
	case OpCompbench:
		name = s.Info.Kind.String()
	case OpBinary:
		name = s.Bin.String()
	}
	return fmt.Sprintf("%s %v -> %d (%v)", name, s.In, s.Out, s.Node)
}

// Class says where a buffer lives.
type Class int

const (
	// Activation buffers live in the arena, placed by liveness.
	Activation Class = iota
	// Param buffers hold weights (input nodes with a value when compiled).
	Param
	// Input buffers hold per-batch data (input nodes without a value, or
	// with one the caller marks as input).
	Input
	// Const buffers hold scalars folded at compile time.
	Const
	// Output buffers hold the requested roots (loss, gradients, logits):
	// persistent, so they can be read after the run.
	Output
)

var classNames = [...]string{"activation", "param", "input", "const", "output"}

func (c Class) String() string { return classNames[c] }

// Buffer is one planned buffer of float32 (or int32 for Int) elements.
type Buffer struct {
	// Name is the node's name.
	Name  string
	Class Class
	// Int marks integer data (token ids, targets), stored as int32.
	Int bool
	// Shape and Size (elements) of the buffer.
	Shape []int
	Size  int
	// Offset is the arena offset in elements (activations only).
	Offset int
	// Value is a float Const buffer's value (Size 1); Ints an integer
	// Const buffer's data (relative-position buckets).
	Value float32
	Ints  []int32
	// IDLimit bounds an integer input read as ids or targets: every value
	// must lie in [0, IDLimit) or, when HasIgnore, equal Ignore. 0: no
	// bound known.
	IDLimit   int
	Ignore    int32
	HasIgnore bool
	// Def and LastUse are the first step writing and the last step reading
	// the buffer (activations); -1 when not applicable.
	Def, LastUse int
	// Node is the node that defined the buffer.
	Node *G.Node
}

// Program is a graph compiled into steps over planned buffers.
type Program struct {
	// Steps run in order.
	Steps []Step
	// Bufs are indexed by buffer id.
	Bufs []Buffer
	// ArenaSize is the activation arena in elements.
	ArenaSize int
	// Roots are the nodes asked for, with their buffers.
	Roots []*G.Node
	// nodeBuf maps every compiled node to its buffer (views share their
	// source's).
	nodeBuf map[*G.Node]int
}

// BufferOf returns the buffer id holding n's value.
func (p *Program) BufferOf(n *G.Node) (int, bool) {
	id, ok := p.nodeBuf[n]
	return id, ok
}

// ActivationTotal is the sum of all activation sizes (what the arena would
// need without reuse).
func (p *Program) ActivationTotal() int {
	t := 0
	for i := range p.Bufs {
		if p.Bufs[i].Class == Activation {
			t += align(p.Bufs[i].Size)
		}
	}
	return t
}

// PersistentSize is the number of elements of the non-arena buffers.
func (p *Program) PersistentSize() int {
	t := 0
	for i := range p.Bufs {
		if p.Bufs[i].Class != Activation {
			t += p.Bufs[i].Size
		}
	}
	return t
}
