package transformer

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/attention"
	"compbench/models"
	"compbench/ops"
)

// graphKind says what a compiled graph computes.
type graphKind int

const (
	kindTrain  graphKind = iota // loss, gradients, dropout
	kindLoss                    // loss only, no dropout
	kindEncode                  // encoder memory
	kindDecode                  // logits from memory and decoder inputs
)

// graphKey identifies a compiled graph: Gorgonia graphs have fixed shapes,
// so one is built per batch shape and reused (building costs ~12 ms).
type graphKey struct {
	kind      graphKind
	b, s, t   int
	smoothing float32
	// e, si, so are the double I/O encoder's examples per row and padded
	// input and output lengths (s = e*so); 0 for flat sources.
	e, si, so int
}

// graphInputs are a graph's input nodes and their reusable values.
type graphInputs struct {
	B, S, T                     int
	src, decIn, tgt             *G.Node // int [B*S], [B*T], [B*T]
	srcPos, tgtPos              *G.Node // [B*S, D], [B*T, D]; nil with relative attention
	encBias, decBias, crossBias *G.Node // [B, 1, S, S], [B, 1, T, T], [B, 1, T, S]
	mem                         *G.Node // [B*S, D], decode graphs only
	// encReal and decReal weigh ACT's ponder times: ACTLossWeight/count at
	// the real source and target positions, 0 at padding; training graphs
	// with ACT only.
	encReal, decReal *G.Node // [1, B*S], [1, B*T]
	// Double I/O encoder inputs (E > 0 only; then S = E*So).
	E, Si, So                     int
	ioIn, ioOut                   *G.Node // int [B*E*Si], [B*E*So]
	ioInPos, ioOutPos             *G.Node // [B*E*Si, D], [B*E*So, D]; nil with relative attention
	inBias, outBias, outCrossBias *G.Node // [B*E, 1, Si, Si], [B*E, 1, So, So], [B*E, 1, So, Si]
	vals                          map[*G.Node]*tensor.Dense
}

type compiled struct {
	lastUse uint64
	in      graphInputs
	out     *G.Node // loss scalar, memory or logits
	grads   G.Nodes
	gradIdx []int
	drop    *ops.DropoutSource
	// bytes estimates the memory the graph holds once run (graphBytes).
	bytes int64
}

// graph returns the compiled graph for k, building it when it is not
// cached. The cache is bounded by count (MaxGraphs) and by the estimated
// bytes of the graphs it holds (GraphBudget): least recently used graphs
// are dropped until the new one fits. A graph larger than the budget on
// its own is still built, and is then the only one kept. Eviction never
// changes results: a graph is a pure function of the weights and its
// inputs, and each graph numbers its dropout ops from its own source.
func (m *Model) graph(k graphKey) (*compiled, error) {
	m.clock++
	if c, ok := m.graphs[k]; ok {
		c.lastUse = m.clock
		return c, nil
	}
	// Built before evicting, so a failed build drops nothing and the new
	// graph's size is known.
	c, err := m.build(k)
	if err != nil {
		return nil, fmt.Errorf("build graph %v: %w", k, err)
	}
	for len(m.graphs) > 0 && (len(m.graphs) >= max(1, m.MaxGraphs) ||
		(m.GraphBudget > 0 && m.cachedBytes+c.bytes > m.GraphBudget)) {
		m.evictOldest()
	}
	c.lastUse = m.clock
	m.graphs[k] = c
	m.cachedBytes += c.bytes
	return c, nil
}

// evictOldest drops the least recently used graph.
func (m *Model) evictOldest() {
	var old graphKey
	oldest := m.clock + 1
	for key, c := range m.graphs {
		if c.lastUse < oldest || (c.lastUse == oldest && keyLess(key, old)) {
			old, oldest = key, c.lastUse
		}
	}
	m.cachedBytes -= m.graphs[old].bytes
	delete(m.graphs, old)
}

// graphBytes estimates the memory a compiled graph holds after its first
// run: the byte size (shape × dtype) of every node's value, gradient nodes
// included, leaving out the parameter nodes, which are bound to the
// model's own weights. It is an upper bound on the values of Gorgonia's
// tape machine (the tests' oracle), which reuses registers between nodes
// whose lives do not overlap: at RobustFill sizes (2 layers, d 64, batch
// 32, source 192) the estimate is 459 MB where the first run grows the
// heap by 398 MB. The engine runs a graph as a program with buffers of its
// own, which models.Programs counts exactly.
func graphBytes(g *G.ExprGraph, params map[int]*G.Node) int64 {
	shared := make(map[*G.Node]bool, len(params))
	for _, n := range params {
		shared[n] = true
	}
	var total int64
	for _, n := range g.AllNodes() {
		if shared[n] {
			continue
		}
		total += int64(n.Shape().TotalSize()) * int64(n.Dtype().Size())
	}
	return total
}

func (m *Model) build(k graphKey) (*compiled, error) {
	cfg := m.Cfg
	b := m.newBuilder(k.kind == kindTrain)
	in := &graphInputs{B: k.b, S: k.s, T: k.t, vals: map[*G.Node]*tensor.Dense{}}
	B, S, T, D := k.b, k.s, k.t, cfg.Dim
	mk := func(name string, dt tensor.Dtype, shape ...int) *G.Node {
		n := b.input(name, dt, shape...)
		size := 1
		for _, d := range shape {
			size *= d
		}
		if dt == tensor.Int {
			in.vals[n] = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]int, size)))
		} else {
			in.vals[n] = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(make([]float32, size)))
		}
		return n
	}
	needEnc := k.kind != kindDecode
	needDec := k.kind != kindEncode
	if k.e > 0 && k.kind != kindDecode {
		if k.s != k.e*k.so {
			return nil, fmt.Errorf("I/O graph: memory length %d is not %d examples of %d", k.s, k.e, k.so)
		}
		in.E, in.Si, in.So = k.e, k.si, k.so
		BE := B * k.e
		in.ioIn = mk("io_in", tensor.Int, BE*k.si)
		in.ioOut = mk("io_out", tensor.Int, BE*k.so)
		in.inBias = mk("in_bias", tensor.Float32, BE, 1, k.si, k.si)
		in.outBias = mk("out_bias", tensor.Float32, BE, 1, k.so, k.so)
		in.outCrossBias = mk("out_cross_bias", tensor.Float32, BE, 1, k.so, k.si)
		if !cfg.Relative {
			in.ioInPos = mk("io_in_pos", tensor.Float32, BE*k.si, D)
			FillPos(in.vals[in.ioInPos].Data().([]float32), BE, k.si, D)
			in.ioOutPos = mk("io_out_pos", tensor.Float32, BE*k.so, D)
			FillPos(in.vals[in.ioOutPos].Data().([]float32), BE, k.so, D)
		}
	} else if needEnc {
		in.src = mk("src", tensor.Int, B*S)
		in.encBias = mk("enc_bias", tensor.Float32, B, 1, S, S)
		if !cfg.Relative {
			in.srcPos = mk("src_pos", tensor.Float32, B*S, D)
			FillPos(in.vals[in.srcPos].Data().([]float32), B, S, D)
		}
	}
	if needDec {
		in.decIn = mk("dec_in", tensor.Int, B*T)
		in.decBias = mk("dec_bias", tensor.Float32, B, 1, T, T)
		in.crossBias = mk("cross_bias", tensor.Float32, B, 1, T, S)
		if !cfg.Relative {
			in.tgtPos = mk("tgt_pos", tensor.Float32, B*T, D)
			FillPos(in.vals[in.tgtPos].Data().([]float32), B, T, D)
		}
	}
	c := &compiled{}
	switch k.kind {
	case kindEncode:
		c.out = b.memory(in)
	case kindDecode:
		in.mem = mk("mem", tensor.Float32, B*S, D)
		c.out = b.decoder(in, in.mem)
	default:
		mem := b.memory(in)
		logits := b.decoder(in, mem) // [B*T, V]
		in.tgt = mk("tgt", tensor.Int, B*T)
		if b.err == nil {
			c.out = b.must(ops.SoftmaxCrossEntropy(logits, in.tgt, models.PadID, k.smoothing)) // scalar
		}
		if cfg.ACT && k.kind == kindTrain && b.err == nil {
			// The ponder cost is part of what training minimises, not of
			// the loss evaluation reports.
			in.encReal = mk("enc_real", tensor.Float32, 1, B*S)
			in.decReal = mk("dec_real", tensor.Float32, 1, B*T)
			if pc := b.ponderCost(c.out.Shape(), in.encReal, in.decReal); b.err == nil {
				c.out = b.must(ops.Add(c.out, pc)) // scalar
			}
		}
	}
	if b.err != nil {
		return nil, b.err
	}
	if k.kind == kindTrain {
		for i := range m.p.Names {
			if n, ok := b.nodes[i]; ok {
				c.grads = append(c.grads, n)
				c.gradIdx = append(c.gradIdx, i)
			}
		}
		gs, err := G.Grad(c.out, c.grads...)
		if err != nil {
			return nil, fmt.Errorf("gradient: %w", err)
		}
		c.grads = gs
	}
	for n, v := range in.vals {
		if err := G.Let(n, v); err != nil {
			return nil, err
		}
	}
	c.in, c.drop = *in, b.drop
	c.bytes = graphBytes(b.g, b.nodes)
	return c, nil
}

func keyLess(a, b graphKey) bool {
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.b != b.b {
		return a.b < b.b
	}
	if a.s != b.s {
		return a.s < b.s
	}
	if a.t != b.t {
		return a.t < b.t
	}
	if a.e != b.e {
		return a.e < b.e
	}
	if a.si != b.si {
		return a.si < b.si
	}
	return a.so < b.so
}

// FillPos writes sinusoidal positions (Vaswani et al. §3.5) for B rows of
// T positions.
func FillPos(dst []float32, B, T, D int) {
	for t := 0; t < T; t++ {
		row := dst[t*D : (t+1)*D]
		for i := 0; i < D; i += 2 {
			a := float64(t) / math.Pow(10000, float64(i)/float64(D))
			row[i] = float32(math.Sin(a))
			if i+1 < D {
				row[i+1] = float32(math.Cos(a))
			}
		}
	}
	for b := 1; b < B; b++ {
		copy(dst[b*T*D:(b+1)*T*D], dst[:T*D])
	}
}

func fillRel(dst []int, tq, tk int, bidirectional bool, cfg Config) {
	for i := 0; i < tq; i++ {
		for j := 0; j < tk; j++ {
			dst[i*tk+j] = attention.Bucket(i-j, bidirectional, cfg.RelBuckets, cfg.RelMaxDistance)
		}
	}
}

var negInf = float32(math.Inf(-1))

// FillPadBias writes the [B, 1, Tq, Tk] additive mask letting query i of
// row b see key j when i < nq[b] and j < nk[b].
func FillPadBias(dst []float32, B, tq, tk int, nq, nk []int) {
	for b := 0; b < B; b++ {
		for i := 0; i < tq; i++ {
			row := dst[(b*tq+i)*tk : (b*tq+i+1)*tk]
			for j := range row {
				if i < nq[b] && j < nk[b] {
					row[j] = 0
				} else {
					row[j] = negInf
				}
			}
		}
	}
}

// fillDecBias writes the decoder self-attention mask for decoder inputs
// ids [B*T] with nq[b] real positions per row.
func fillDecBias(dst []float32, kind string, ids []int, B, T int, nq []int) error {
	for b := 0; b < B; b++ {
		ok, err := decoderAllowed(kind, ids[b*T:(b+1)*T], nq[b])
		if err != nil {
			return err
		}
		for i, row := range ok {
			for j, a := range row {
				if a {
					dst[(b*T+i)*T+j] = 0
				} else {
					dst[(b*T+i)*T+j] = negInf
				}
			}
		}
	}
	return nil
}

// batchGraph returns the graph of kind for bt with its inputs set (all but
// the targets).
func (m *Model) batchGraph(kind graphKind, bt *models.Batch, eps float64) (*compiled, error) {
	decLen := lengths(bt.Rows, bt.B, false)
	if m.Cfg.DoubleIO() {
		ib, err := m.splitIO(bt.Src, bt.B, bt.S)
		if err != nil {
			return nil, err
		}
		c, err := m.graph(ib.key(kind, bt.T, eps))
		if err != nil {
			return nil, err
		}
		return c, m.setIOInputs(c, ib, bt.DecIn, decLen)
	}
	c, err := m.graph(graphKey{kind: kind, b: bt.B, s: bt.S, t: bt.T, smoothing: float32(eps)})
	if err != nil {
		return nil, err
	}
	return c, m.setInputs(c, bt.Src, bt.DecIn, lengths(bt.Rows, bt.B, true), decLen)
}

// setInputs fills the id inputs and masks of c for one batch.
func (m *Model) setInputs(c *compiled, src, decIn []int, srcLen, decLen []int) error {
	in := &c.in
	if in.src != nil {
		copy(in.vals[in.src].Data().([]int), src)
		FillPadBias(in.vals[in.encBias].Data().([]float32), in.B, in.S, in.S, srcLen, srcLen)
	}
	if in.decIn != nil {
		copy(in.vals[in.decIn].Data().([]int), decIn)
		if err := fillDecBias(in.vals[in.decBias].Data().([]float32), m.Cfg.Mask, decIn, in.B, in.T, decLen); err != nil {
			return err
		}
		FillPadBias(in.vals[in.crossBias].Data().([]float32), in.B, in.T, in.S, decLen, srcLen)
	}
	if in.encReal != nil {
		fillReal(in.vals[in.encReal].Data().([]float32), in.B, in.S, srcLen)
		fillReal(in.vals[in.decReal].Data().([]float32), in.B, in.T, decLen)
	}
	return nil
}

// fillReal writes ACTLossWeight/count at the first n[b] of each row's L
// positions and 0 elsewhere: the weights of ACT's ponder cost, a mean over
// real positions.
func fillReal(dst []float32, B, L int, n []int) {
	count := 0
	for _, k := range n {
		count += k
	}
	clear(dst)
	for b := 0; b < B; b++ {
		for j := 0; j < n[b]; j++ {
			dst[b*L+j] = ACTLossWeight / float32(count)
		}
	}
}

func lengths(rows []*models.Example, B int, src bool) []int {
	out := make([]int, B)
	for i, e := range rows {
		if src {
			out[i] = len(e.Src)
		} else {
			out[i] = len(e.Tgt)
		}
	}
	return out
}
