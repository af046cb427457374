package engine

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/kernels"
	"compbench/ops"
)

// Machine is a Program bound to a Backend: persistent buffers allocated and
// parameters uploaded once, the arena allocated once, views of it per
// activation.
type Machine struct {
	// Prog is the compiled program.
	Prog *Program
	// B is the backend running it.
	B     Backend
	bufs  []Buf
	owned []Buf
	conv  []int32 // staging for int uploads
}

// NewMachine allocates p's buffers on b and uploads the parameters' and
// constants' values (an input node with a value, e.g. one bound with
// G.Let, is uploaded too; later batches go through Set).
func NewMachine(p *Program, b Backend) (*Machine, error) { return NewSharedMachine(p, b, nil) }

// NewSharedMachine is NewMachine with the parameters named in shared bound
// to those buffers, neither allocated nor uploaded: programs compiled for
// several batch shapes then train one set of device weights.
func NewSharedMachine(p *Program, b Backend, shared map[string]Buf) (*Machine, error) {
	m := &Machine{Prog: p, B: b, bufs: make([]Buf, len(p.Bufs))}
	arena, err := b.Alloc(max(p.ArenaSize, 1))
	if err != nil {
		return nil, fmt.Errorf("engine: arena of %d floats: %w", p.ArenaSize, err)
	}
	m.owned = append(m.owned, arena)
	for i := range p.Bufs {
		pb := &p.Bufs[i]
		if pb.Class == Activation {
			m.bufs[i] = b.View(arena, pb.Offset, pb.Size)
			continue
		}
		if sb, ok := shared[pb.Name]; ok && pb.Class == Param {
			m.bufs[i] = sb
			continue
		}
		var buf Buf
		if pb.Int {
			buf, err = b.AllocInt(pb.Size)
		} else {
			buf, err = b.Alloc(pb.Size)
		}
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("engine: buffer %s: %w", pb.Name, err)
		}
		m.owned = append(m.owned, buf)
		m.bufs[i] = buf
		switch {
		case pb.Class == Const && pb.Int:
			err = b.UploadInt(buf, pb.Ints)
		case pb.Class == Const:
			err = b.Upload(buf, []float32{pb.Value})
		case (pb.Class == Param || pb.Class == Input) && pb.Node.Value() != nil:
			err = m.Set(pb.Node, pb.Node.Value())
		}
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("engine: buffer %s: %w", pb.Name, err)
		}
	}
	return m, nil
}

// Close frees the machine's buffers.
func (m *Machine) Close() {
	for _, b := range m.owned {
		m.B.Free(b)
	}
	m.owned = nil
}

// Buffer returns the backend buffer holding n's value.
func (m *Machine) Buffer(n *G.Node) (Buf, error) {
	id, ok := m.Prog.nodeBuf[n]
	if !ok {
		return nil, fmt.Errorf("engine: node %v is not in the program", n)
	}
	return m.bufs[id], nil
}

// Set uploads v (a float32 or int tensor, or a float32 scalar) into n's
// buffer; ids must fit in int32.
func (m *Machine) Set(n *G.Node, v G.Value) error {
	id, ok := m.Prog.nodeBuf[n]
	if !ok {
		return fmt.Errorf("engine: node %v is not in the program", n)
	}
	pb := &m.Prog.Bufs[id]
	switch x := v.(type) {
	case *G.F32:
		return m.B.Upload(m.bufs[id], []float32{float32(*x)})
	case *tensor.Dense:
		switch d := x.Data().(type) {
		case []float32:
			return m.SetFloats(n, d)
		case []int:
			return m.SetInts(n, d)
		}
	}
	return fmt.Errorf("engine: %s: value of type %T (%v) not supported", pb.Name, v, v.Dtype())
}

// SetFloats uploads float32 data into n's buffer.
func (m *Machine) SetFloats(n *G.Node, d []float32) error {
	id, ok := m.Prog.nodeBuf[n]
	if !ok {
		return fmt.Errorf("engine: node %v is not in the program", n)
	}
	if pb := &m.Prog.Bufs[id]; pb.Int || len(d) != pb.Size {
		return fmt.Errorf("engine: %s holds %d values (ids: %v), got %d floats", pb.Name, pb.Size, pb.Int, len(d))
	}
	return m.B.Upload(m.bufs[id], d)
}

// SetInts uploads ids into n's integer buffer.
func (m *Machine) SetInts(n *G.Node, d []int) error {
	id, ok := m.Prog.nodeBuf[n]
	if !ok || !m.Prog.Bufs[id].Int {
		return fmt.Errorf("engine: node %v is not an integer input of the program", n)
	}
	pb := &m.Prog.Bufs[id]
	if len(d) != pb.Size {
		return fmt.Errorf("engine: %s holds %d ids, got %d", pb.Name, pb.Size, len(d))
	}
	m.conv = m.conv[:0]
	for i, v := range d {
		if pb.HasIgnore && v == int(pb.Ignore) {
			m.conv = append(m.conv, int32(v))
			continue
		}
		if v < math.MinInt32 || v > math.MaxInt32 || (pb.IDLimit > 0 && (v < 0 || v >= pb.IDLimit)) {
			return fmt.Errorf("engine: %s: id %d at position %d outside [0,%d)", pb.Name, v, i, pb.IDLimit)
		}
		m.conv = append(m.conv, int32(v))
	}
	return m.B.UploadInt(m.bufs[id], m.conv)
}

// Read downloads n's value into dst (its full size).
func (m *Machine) Read(n *G.Node, dst []float32) error {
	id, ok := m.Prog.nodeBuf[n]
	if !ok {
		return fmt.Errorf("engine: node %v is not in the program", n)
	}
	if pb := &m.Prog.Bufs[id]; len(dst) != pb.Size {
		return fmt.Errorf("engine: %s holds %d values, reading into %d", pb.Name, pb.Size, len(dst))
	}
	return m.B.Download(dst, m.bufs[id])
}

// Scalar downloads a one-element value (the loss).
func (m *Machine) Scalar(n *G.Node) (float32, error) {
	var v [1]float32
	if err := m.Read(n, v[:]); err != nil {
		return 0, err
	}
	return v[0], nil
}

// Run executes every step in order. Dropout reads its source's seed, step
// and mode now, so callers set them as for Gorgonia's VM.
func (m *Machine) Run() error { return m.RunSteps(0, len(m.Prog.Steps)) }

// RunSteps executes steps [from, to) of the program: a caller that must
// act between two parts of one program (the LSTM's Transformer encoder
// computes its memory, then waits for the memory's gradient) runs them in
// order; running every part once is Run.
func (m *Machine) RunSteps(from, to int) error {
	if from < 0 || to > len(m.Prog.Steps) || from > to {
		return fmt.Errorf("engine: steps [%d, %d) of a program of %d", from, to, len(m.Prog.Steps))
	}
	for i := from; i < to; i++ {
		if err := m.step(&m.Prog.Steps[i]); err != nil {
			return fmt.Errorf("engine: step %d %s: %w", i, m.Prog.Steps[i].String(), err)
		}
	}
	return nil
}

func (m *Machine) step(st *Step) error {
	b := m.B
	in := func(k int) Buf { return m.bufs[st.In[k]] }
	out := m.bufs[st.Out]
	shape := func(k int) []int {
		if k < len(st.InShapes) {
			return st.InShapes[k]
		}
		return m.Prog.Bufs[st.In[k]].Shape
	}
	switch st.Op {
	case OpGemm:
		return b.Gemm(st.Gemm, in(0), in(1), out)
	case OpLinear:
		if st.Gemm.Beta != 0 {
			if err := b.RepeatRows(st.Gemm.M, st.Gemm.N, in(2), out); err != nil {
				return err
			}
		}
		return b.Gemm(st.Gemm, in(0), in(1), out)
	case OpBinary:
		return b.Binary(st.Bin, st.Sizes[0], in(0), st.Strides[0], in(1), st.Strides[1], out)
	case OpRepeat:
		return b.RepeatRows(st.Sizes[0], st.Sizes[1], in(0), out)
	case OpSum:
		return b.SumRows(st.Sizes[0], st.Sizes[1], in(0), out)
	case OpTranspose:
		return b.Transpose2D(st.Sizes[0], st.Sizes[1], in(0), out)
	case OpCompbench:
	default:
		return fmt.Errorf("unknown op %v", st.Op)
	}
	info := &st.Info
	n := st.Sizes[0]
	switch info.Kind {
	case ops.KindDropout:
		p := kernels.DropoutParams{ID: info.DropID}
		if src := info.Drop; src.Training() && info.P > 0 {
			p.P, p.Seed, p.Step = info.P, src.Seed(), src.Step()
		}
		return b.Dropout(n, p, in(0), out, m.bufs[st.Aux])
	case ops.KindDropoutGrad:
		return b.DropoutGrad(n, in(0), in(1), out)
	case ops.KindEmbed:
		return b.Embed(shape(1)[0], info.Cols, in(0), in(1), out)
	case ops.KindEmbedGrad:
		return b.EmbedGrad(info.Rows, info.Cols, shape(1)[0], in(0), in(1), out)
	case ops.KindRelBias:
		return b.RelBias(info.Rows, info.Cols, info.Tq, info.Tk, in(0), in(1), out)
	case ops.KindRelBiasGrad:
		return b.RelBiasGrad(info.Rows, info.Cols, info.Tq, info.Tk, in(0), in(1), out)
	case ops.KindLayerNorm:
		s := shape(0)
		return b.LayerNorm(s[0], s[1], info.Eps, in(0), in(1), in(2), out)
	case ops.KindLayerNormGradX:
		s := shape(0)
		return b.LayerNormGradX(s[0], s[1], info.Eps, in(0), in(1), in(2), out)
	case ops.KindLayerNormGradGamma:
		s := shape(0)
		return b.LayerNormGradGamma(s[0], s[1], info.Eps, in(0), in(1), out)
	case ops.KindLayerNormGradBeta:
		s := shape(1)
		return b.LayerNormGradBeta(s[0], s[1], in(1), out)
	case ops.KindRMSNorm:
		s := shape(0)
		return b.RMSNorm(s[0], s[1], info.Eps, in(0), in(1), out)
	case ops.KindRMSNormGradX:
		s := shape(0)
		return b.RMSNormGradX(s[0], s[1], info.Eps, in(0), in(1), in(2), out)
	case ops.KindRMSNormGradGamma:
		s := shape(0)
		return b.RMSNormGradGamma(s[0], s[1], info.Eps, in(0), in(1), out)
	case ops.KindAttnSoftmax:
		s := shape(0)
		as := kernels.AttnShape{B: s[0], H: s[1], Tq: s[2], Tk: s[3]}
		var mask, bias Buf
		var mb, bb kernels.Bcast
		k := 1
		if info.HasMask {
			mask, mb = in(k), kernels.Bcast{B: shape(k)[0], H: shape(k)[1]}
			k++
		}
		if info.HasBias {
			bias, bb = in(k), kernels.Bcast{B: shape(k)[0], H: shape(k)[1]}
		}
		return b.AttnSoftmax(as, in(0), mask, mb, bias, bb, out)
	case ops.KindAttnSoftmaxGrad:
		s := shape(0)
		tk := s[len(s)-1]
		return b.AttnSoftmaxGrad(n/tk, tk, in(0), in(1), out)
	case ops.KindSumTo:
		s := shape(0)
		return b.SumTo(kernels.AttnShape{B: s[0], H: s[1], Tq: s[2], Tk: s[3]}, kernels.Bcast{B: info.Shape[0], H: info.Shape[1]}, in(0), out)
	case ops.KindSoftmaxCE:
		s := shape(0)
		return b.SoftmaxCE(s[0], s[1], kernels.CEParams{Ignore: int32(info.Ignore), Smoothing: info.Smoothing}, in(0), in(1), out)
	case ops.KindSoftmaxCEGrad:
		s := shape(0)
		return b.SoftmaxCEGrad(s[0], s[1], kernels.CEParams{Ignore: int32(info.Ignore), Smoothing: info.Smoothing}, in(0), in(1), in(2), out)
	case ops.KindGELU:
		return b.GELU(n, in(0), out)
	case ops.KindGELUGrad:
		return b.GELUGrad(n, in(0), in(1), out)
	case ops.KindGELUErf:
		return b.GELUErf(n, in(0), out)
	case ops.KindGELUErfGrad:
		return b.GELUErfGrad(n, in(0), in(1), out)
	case ops.KindReLU:
		return b.ReLU(n, in(0), out)
	case ops.KindReLUGrad:
		return b.ReLUGrad(n, in(0), in(1), out)
	case ops.KindAdd:
		return b.Binary(kernels.OpAdd, n, in(0), 1, in(1), 1, out)
	case ops.KindAddBias:
		s := shape(0)
		return b.AddBias(s[0], s[1], in(0), in(1), out)
	}
	return fmt.Errorf("no kernel for %s", info.Kind)
}
