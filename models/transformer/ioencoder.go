package transformer

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"

	"compbench/data/robustfill"
	"compbench/models"
)

// Double attention over I/O specifications (Shi et al. 2023, §4: "for each
// example (I_i, O_i), the encoder performs self-attention on input I_i
// followed by cross-attention on output O_i to I_i ... the encoding E is the
// concatenation across examples", after Devlin et al. 2017), selected by
// Config.IOEncoder = "double".
//
// The source stays the flat "in -> out | in -> out ..." token sequence of
// the records (robustfill.EncodeIO), so batching, vocabularies, decoding and
// checkpoints are shared with the flat model; the model splits each row at
// "|" and "->" itself (the character "|" is written PIPE, so the split is
// unambiguous). Then, batched as [B*E, L] sequences:
//
//   - each input I_e runs through the encoder layers (enc*, enc.ln);
//   - each output O_e runs through the output-encoder layers (io*, io.ln):
//     self-attention, cross-attention to its own encoded input, feed-forward;
//   - the decoder cross-attends to the encoded outputs of all examples of its
//     row, padding masked (padded positions and padded examples alike).
//
// Decisions where the paper is silent: the input encoder is the flat
// model's encoder (same weights and names); the output encoder has as many
// layers as the encoder (Config.Layers) and is pre-LN like every other
// stack; inputs and outputs share the source embedding (both are strings
// over the same characters); positions restart at 0 in every input and
// output; relative attention, when on, gives the output encoder's
// self-attention a bidirectional bias table and cross-attention none, as in
// the decoder. Checkpoint names of the added weights: io<i>.self.*,
// io<i>.cross.*, io<i>.ln0-2.{g,b}, io<i>.ffn.{w1,b1,w2,b2}, io.ln.{g,b},
// created after all flat weights.

// ioWidth rounds padded example lengths up, bounding the graph shapes.
const ioWidth = 8

// SetIOVocab gives a double I/O model the source ids of the structure
// tokens "->" and "|" of v. train.NewModel calls it.
func (m *Model) SetIOVocab(v *models.Vocab) error {
	if v == nil {
		return fmt.Errorf("io_encoder double: no vocabulary")
	}
	arrow, ok := v.SourceID(robustfill.IOArrow)
	if !ok {
		return fmt.Errorf("io_encoder double needs I/O-specification sources (in %s out %s ...), but the source vocabulary has no %q",
			robustfill.IOArrow, robustfill.IOSep, robustfill.IOArrow)
	}
	sep, ok := v.SourceID(robustfill.IOSep)
	if !ok {
		sep = -1 // every source holds one example
	}
	m.ioArrow, m.ioSep = arrow, sep
	return nil
}

// ioBatch is a batch of flat sources split into examples: row b's example e
// is sequence b*E+e.
type ioBatch struct {
	// B rows of E examples; Si, So padded input and output lengths.
	B, E, Si, So int
	// In [B*E*Si] and Out [B*E*So] are the ids, PadID-padded.
	In, Out []int
	// InLen and OutLen [B*E] are the real lengths (0 for padded examples).
	InLen, OutLen []int
}

// splitIO splits the rows of src [B*S] (each PadID-padded) into examples:
// at "|" between examples and at the first "->" within one (a source
// truncated inside an example keeps what is there).
func (m *Model) splitIO(src []int, B, S int) (*ioBatch, error) {
	if m.ioArrow < 0 {
		return nil, fmt.Errorf("io_encoder double: the source ids of %q and %q are not set (SetIOVocab)", robustfill.IOArrow, robustfill.IOSep)
	}
	if len(src) != B*S {
		return nil, fmt.Errorf("io_encoder double: %d source ids for %d rows of %d", len(src), B, S)
	}
	type example struct{ in, out []int }
	rows := make([][]example, B)
	E, li, lo := 1, 0, 0
	for b := range B {
		row := src[b*S : (b+1)*S]
		if n := slices.Index(row, models.PadID); n >= 0 {
			row = row[:n]
		}
		for len(row) > 0 {
			seg, rest := row, []int(nil)
			if end := slices.Index(row, m.ioSep); m.ioSep >= 0 && end >= 0 {
				seg, rest = row[:end], row[end+1:]
			}
			ex := example{in: seg}
			if a := slices.Index(seg, m.ioArrow); a >= 0 {
				ex = example{in: seg[:a], out: seg[a+1:]}
			}
			rows[b] = append(rows[b], ex)
			li, lo = max(li, len(ex.in)), max(lo, len(ex.out))
			row = rest
		}
		E = max(E, len(rows[b]))
	}
	ib := &ioBatch{B: B, E: E, Si: models.RoundUp(li, ioWidth), So: models.RoundUp(lo, ioWidth)}
	ib.In = make([]int, B*E*ib.Si)
	ib.Out = make([]int, B*E*ib.So)
	ib.InLen = make([]int, B*E)
	ib.OutLen = make([]int, B*E)
	for b, exs := range rows {
		for e, ex := range exs {
			k := b*E + e
			copy(ib.In[k*ib.Si:], ex.in)
			copy(ib.Out[k*ib.So:], ex.out)
			ib.InLen[k], ib.OutLen[k] = len(ex.in), len(ex.out)
		}
	}
	return ib, nil
}

// key is the graph key of ib for decoder length T.
func (ib *ioBatch) key(kind graphKind, T int, eps float64) graphKey {
	return graphKey{kind: kind, b: ib.B, s: ib.E * ib.So, t: T, smoothing: float32(eps), e: ib.E, si: ib.Si, so: ib.So}
}

// setIOInputs fills c's I/O inputs and, for decIn != nil, its decoder inputs
// and masks: the decoder's query i of row b sees output position j of
// example e when i < decLen[b] and j < OutLen[b*E+e].
func (m *Model) setIOInputs(c *compiled, ib *ioBatch, decIn, decLen []int) error {
	in := &c.in
	BE := ib.B * ib.E
	copy(in.vals[in.ioIn].Data().([]int), ib.In)
	copy(in.vals[in.ioOut].Data().([]int), ib.Out)
	FillPadBias(in.vals[in.inBias].Data().([]float32), BE, ib.Si, ib.Si, ib.InLen, ib.InLen)
	FillPadBias(in.vals[in.outBias].Data().([]float32), BE, ib.So, ib.So, ib.OutLen, ib.OutLen)
	FillPadBias(in.vals[in.outCrossBias].Data().([]float32), BE, ib.So, ib.Si, ib.OutLen, ib.InLen)
	if decIn == nil {
		return nil
	}
	copy(in.vals[in.decIn].Data().([]int), decIn)
	if err := fillDecBias(in.vals[in.decBias].Data().([]float32), m.Cfg.Mask, decIn, in.B, in.T, decLen); err != nil {
		return err
	}
	cross := in.vals[in.crossBias].Data().([]float32) // [B, 1, T, E*So]
	S := ib.E * ib.So
	for b := range ib.B {
		for i := range in.T {
			row := cross[(b*in.T+i)*S : (b*in.T+i+1)*S]
			for e := range ib.E {
				n := 0
				if i < decLen[b] {
					n = ib.OutLen[b*ib.E+e]
				}
				for j := range ib.So {
					if j < n {
						row[e*ib.So+j] = 0
					} else {
						row[e*ib.So+j] = negInf
					}
				}
			}
		}
	}
	return nil
}

// ioEncodeGraph splits src into examples and returns the encoder graph of
// their shape with its inputs set; its output is the encoded outputs
// [B*E*So, D].
func (m *Model) ioEncodeGraph(src []int, B, S int) (*compiled, *ioBatch, error) {
	ib, err := m.splitIO(src, B, S)
	if err != nil {
		return nil, nil, err
	}
	c, err := m.graph(ib.key(kindEncode, 0, 0))
	if err != nil {
		return nil, nil, err
	}
	return c, ib, m.setIOInputs(c, ib, nil, nil)
}

// ioMemory assembles the memory from the encoded outputs enc [B*E*So, D]
// of ib's examples: the memory of row b is the concatenation of its
// examples' encoded outputs without the padding between them
// (cross-attention has no positions, so dropping masked keys changes
// nothing), padded to a multiple of ioWidth.
func (m *Model) ioMemory(ib *ioBatch, enc []float32) *models.Memory {
	B, d := ib.B, m.Cfg.Dim
	mem := &models.Memory{B: B, SrcLen: make([]int, B)}
	longest := 0
	for b := range B {
		for e := range ib.E {
			mem.SrcLen[b] += ib.OutLen[b*ib.E+e]
		}
		longest = max(longest, mem.SrcLen[b])
	}
	mem.S = models.RoundUp(longest, ioWidth)
	mem.Data = make([]float32, B*mem.S*d) // [B*S, D]
	for b := range B {
		at := b * mem.S * d
		for e := range ib.E {
			k := b*ib.E + e
			n := ib.OutLen[k] * d
			at += copy(mem.Data[at:at+n], enc[k*ib.So*d:k*ib.So*d+n])
		}
	}
	return mem
}

// memory is the encoder output the decoder attends to: [B*S, D] for flat
// sources, [B*E*So, D] (row b's examples side by side) for double I/O.
func (b *builder) memory(in *graphInputs) *G.Node {
	if in.E == 0 {
		return b.encoder(in)
	}
	return b.ioEncoder(in)
}

// ioEncoder returns the encoded outputs [B*E*So, D].
func (b *builder) ioEncoder(in *graphInputs) *G.Node {
	be := in.B * in.E
	x := b.encodeStack(in.ioIn, in.ioInPos, be, in.Si, in.inBias) // [B*E*Si, D]
	y := b.embed(b.m.srcEmb, in.ioOut, in.ioOutPos)               // [B*E*So, D]
	for i := range b.m.io {
		l := &b.m.io[i]
		y = b.residual(y, l.ln[0], func(z *G.Node) *G.Node {
			return b.attention(z, z, l.self, be, in.So, in.So, in.outBias, true) // [B*E*So, D]
		})
		y = b.residual(y, l.ln[1], func(z *G.Node) *G.Node {
			return b.attention(z, x, l.cross, be, in.So, in.Si, in.outCrossBias, false) // [B*E*So, D]
		})
		y = b.residual(y, l.ln[2], func(z *G.Node) *G.Node { return b.ffn(z, l) }) // [B*E*So, D]
	}
	return b.layerNorm(y, b.m.ioLN) // [B*E*So, D]
}
