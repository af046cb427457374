package pretrained

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/data"
	"compbench/models"
	"compbench/ops"
)

// network is what Model needs of T5 and BART.
type network interface {
	build(B, S, T int, part Part, labels bool, eps float32, drop *ops.DropoutSource) (*Graph, error)
	params() *models.Params
	config() Config
	Save(out *data.OutputSet, dir string) error
}

func (m *T5) params() *models.Params   { return &m.P }
func (m *T5) config() Config           { return m.Cfg }
func (m *BART) params() *models.Params { return &m.P }
func (m *BART) config() Config         { return m.Cfg }

// Model is a pretrained T5 or BART as a compbench model (models.Model,
// --model t5 or bart with --init hf:DIR): the network of the folder
// models.Config.Pretrained names, its tokenizer, and the map between
// compbench's ids and the model's.
//
// Batches, the loss's ignored padding and greedy and beam decoding work in
// compbench's ids (models/vocab.go): PAD, START, EOS, UNK, then the
// model's token k as id models.NumSpecials + k. The map is applied at the
// model's edge: the graphs see Hugging Face's ids and framing, so the
// loss is the one Hugging Face computes.
//   - T5: source "x </s>", decoder input "<pad> y", labels "y </s>"
//     (T5Tokenizer and T5ForConditionalGeneration's shift_right).
//   - BART: source "<s> x </s>", decoder input "</s> <s> y", labels
//     "<s> y </s>" (BartTokenizer's target and shift_tokens_right); the
//     leading <s> of the target is forced when decoding, as Hugging Face's
//     generation does with a forced BOS.
//
// The next-token logits handed to decoding give the model's special tokens
// (pad, <s>, the unknown and end tokens under their model ids) -Inf, so
// each token is counted once, under compbench's id when it has one.
//
// Training graphs drop out as Hugging Face fine-tunes (config.json's
// rates, Config.DropoutRate and the rest), with masks drawn from the run's
// seed and step; evaluation and decoding graphs have none. Decoding is
// incremental, with a key/value cache (decode.go).
type Model struct {
	net network
	ids idMap
	// MaxGraphs bounds the graphs (and engine programs) kept.
	MaxGraphs int
	graphs    map[graphKey]*compiled
	clock     uint64
	seed      uint64 // dropout masks derive from it
}

// New loads the model of cfg.Pretrained, its dropout masks drawn from
// seed. v is the run's vocabulary
// (NewVocab's, or one read back from a run): it gets the tokenizer, and
// must have the model's size.
func New(cfg models.Config, seed uint64, v *models.Vocab) (*Model, error) {
	f, err := Open(cfg.Pretrained)
	if err != nil {
		return nil, err
	}
	if f.Config.ModelType != cfg.Variant {
		return nil, fmt.Errorf("%s: model_type %q, but the run's model is %q", f.Dir, f.Config.ModelType, cfg.Variant)
	}
	var net network
	if f.Config.ModelType == TypeT5 {
		net, err = LoadT5(f)
	} else {
		net, err = LoadBART(f)
	}
	if err != nil {
		return nil, err
	}
	tok, err := LoadTokenizer(f)
	if err != nil {
		return nil, err
	}
	m := &Model{net: net, MaxGraphs: 8, graphs: map[graphKey]*compiled{}, seed: seed}
	if m.ids, err = newIDMap(f, tok); err != nil {
		return nil, err
	}
	c := f.Config
	if c.ModelType == TypeBART {
		if extra := len(m.ids.srcPre) + len(m.ids.srcPost); cfg.MaxSrcLen+extra > c.MaxPositions || cfg.MaxTgtLen+len(m.ids.tgtPre) > c.MaxPositions {
			return nil, fmt.Errorf("max_src_len %d / max_tgt_len %d: with BART's <s> and </s> they exceed max_position_embeddings %d of %s",
				cfg.MaxSrcLen, cfg.MaxTgtLen, c.MaxPositions, f.Dir)
		}
	}
	if v != nil {
		if want := models.NumSpecials + c.VocabSize; len(v.Source) != want || len(v.Target) != want {
			return nil, fmt.Errorf("%s: the run's vocabulary has %d/%d ids, the model %d (%d specials + vocab_size %d)",
				f.Dir, len(v.Source), len(v.Target), want, models.NumSpecials, c.VocabSize)
		}
		if v.Subword() == nil {
			v.SetSubword(tok)
		}
	}
	return m, nil
}

// NewVocab is the vocabulary of the model in folder dir: compbench's
// specials, then the model's tokens, split and joined by its tokenizer.
func NewVocab(dir string) (*models.Vocab, error) {
	f, err := Open(dir)
	if err != nil {
		return nil, err
	}
	tok, err := LoadTokenizer(f)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return models.SubwordVocab(abs, tok.Pieces(), tok), nil
}

// Params are the weights, under Hugging Face's names (linear weights held
// transposed, [in, out]).
func (m *Model) Params() *models.Params { return m.net.params() }

// Config is the folder's config.json.
func (m *Model) Config() Config { return m.net.config() }

// Save writes the weights as a Hugging Face folder (config.json and
// tokenizer files of the source folder, model.safetensors in its layout).
func (m *Model) Save(out *data.OutputSet, dir string) error { return m.net.Save(out, dir) }

// idMap maps compbench's ids to the model's, and frames sequences.
type idMap struct {
	// pad, start, eos, unk are the model's ids of compbench's PAD, START,
	// EOS and UNK.
	pad, start, eos, unk int
	// srcPre, srcPost frame a source; tgtPre starts a target.
	srcPre, srcPost, tgtPre []int
	// hidden are the model ids whose logits decoding never sees.
	hidden []int
	// limit is the longest sequence the model takes (BART's learned
	// positions; 0: none). A batch padded past it is cut back to it: the
	// lengths are checked against it (New), so only padding is cut.
	limit int
}

func newIDMap(f *Folder, tok *Tokenizer) (idMap, error) {
	c := f.Config
	m := idMap{pad: c.PadID, start: c.DecoderStartID, eos: c.EOSID, unk: tok.unk, srcPost: []int{c.EOSID}}
	if c.ModelType == TypeBART {
		m.limit = c.MaxPositions
	}
	hidden := map[int]bool{c.PadID: true, c.DecoderStartID: true, c.EOSID: true, tok.unk: true}
	if c.ModelType == TypeBART {
		bos := -1
		for id, p := range tok.pieces {
			if p == "<s>" {
				bos = id
			}
		}
		if bos < 0 {
			return m, fmt.Errorf("%s: BART's tokenizer has no <s> token", f.Dir)
		}
		m.srcPre, m.tgtPre = []int{bos}, []int{bos}
		hidden[bos] = true
	}
	for id := range hidden {
		m.hidden = append(m.hidden, id)
	}
	sort.Ints(m.hidden)
	return m, nil
}

// id is the model's id of compbench's id x.
func (m *idMap) id(x int) int {
	switch x {
	case models.PadID:
		return m.pad
	case models.StartID:
		return m.start
	case models.EOSID:
		return m.eos
	case models.UnkID:
		return m.unk
	}
	return x - models.NumSpecials
}

// source frames rows of S compbench ids (PadID after each row's length)
// as the model's: rows of S' ids and their lengths.
func (m *idMap) source(src []int, B, S int) (out []int, S2 int, lens []int, err error) {
	S2 = m.cut(S + len(m.srcPre) + len(m.srcPost))
	out, lens = make([]int, B*S2), make([]int, B)
	for b := 0; b < B; b++ {
		row := append([]int(nil), m.srcPre...)
		for _, x := range src[b*S : (b+1)*S] {
			if x == models.PadID {
				break
			}
			row = append(row, m.id(x))
		}
		row = append(row, m.srcPost...)
		if len(row) > S2 {
			return nil, 0, nil, fmt.Errorf("a source of %d tokens exceeds the model's %d positions", len(row), m.limit)
		}
		lens[b] = len(row)
		for j := range S2 {
			out[b*S2+j] = m.pad
			if j < len(row) {
				out[b*S2+j] = row[j]
			}
		}
	}
	return out, S2, lens, nil
}

// cut is n cut back to the model's positions.
func (m *idMap) cut(n int) int {
	if m.limit > 0 {
		return min(n, m.limit)
	}
	return n
}

// decoder frames decoder inputs [B*T] (StartID first) and, when tgt is not
// nil, labels [B*T] (PadID where not scored) as the model's [B*T'].
func (m *idMap) decoder(decIn, tgt []int, B, T int) (dec, lab []int, T2 int, lens []int) {
	p := len(m.tgtPre)
	T2 = m.cut(T + p)
	dec, lens = make([]int, B*T2), make([]int, B)
	if tgt != nil {
		lab = make([]int, B*T2)
	}
	for b := 0; b < B; b++ {
		for j := range T2 {
			var x int
			switch {
			case j == 0:
				x = m.start
			case j <= p:
				x = m.tgtPre[j-1]
			default:
				x = m.id(decIn[b*T+j-p])
			}
			dec[b*T2+j] = x
			if tgt == nil {
				continue
			}
			y := m.pad
			if j < p {
				y = m.tgtPre[j]
			} else if t := tgt[b*T+j-p]; t != models.PadID {
				y = m.id(t)
			}
			lab[b*T2+j] = y
			if y != m.pad {
				lens[b] = j + 1
			}
		}
	}
	return dec, lab, T2, lens
}

// logits turns the model's next-token logits of one row into compbench's.
func (m *idMap) logits(row []float32, out []float32) {
	inf := float32(math.Inf(-1))
	out[models.PadID], out[models.StartID] = inf, inf
	out[models.EOSID], out[models.UnkID] = row[m.eos], row[m.unk]
	copy(out[models.NumSpecials:], row)
	for _, id := range m.hidden {
		out[models.NumSpecials+id] = inf
	}
}

// graphKey names a compiled graph: its part, shape and loss.
type graphKey struct {
	part    Part
	b, s, t int
	labels  bool
	grads   bool
	eps     float32
}

// compiled is a graph with its gradients and the values of its inputs.
type compiled struct {
	g     *Graph
	grads []*G.Node
	idx   []int
	vals  map[*G.Node]*tensor.Dense
	last  uint64
	drop  *ops.DropoutSource // training graphs' dropout masks
}

// graph returns the graph of k, building it on first use; the least
// recently used is dropped beyond MaxGraphs.
func (m *Model) graph(k graphKey) (*compiled, error) {
	m.clock++
	if c, ok := m.graphs[k]; ok {
		c.last = m.clock
		return c, nil
	}
	for len(m.graphs) >= max(1, m.MaxGraphs) {
		delete(m.graphs, models.Oldest(m.graphs, func(c *compiled) uint64 { return c.last }))
	}
	var drop *ops.DropoutSource
	if k.grads { // a training graph: dropout as Hugging Face fine-tunes
		drop = ops.NewDropoutSource(m.seed)
	}
	g, err := m.net.build(k.b, k.s, k.t, k.part, k.labels, k.eps, drop)
	if err != nil {
		return nil, err
	}
	c := &compiled{g: g, vals: map[*G.Node]*tensor.Dense{}, last: m.clock, drop: drop}
	if k.grads {
		idx := make([]int, 0, len(g.Params))
		for i := range g.Params {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		nodes := make(G.Nodes, len(idx))
		for j, i := range idx {
			nodes[j] = g.Params[i]
		}
		if c.grads, err = G.Grad(g.Loss, nodes...); err != nil {
			return nil, fmt.Errorf("gradients: %w", err)
		}
		c.idx = idx
	}
	for _, n := range []*G.Node{g.Src, g.DecIn, g.Labels, g.EncBias, g.DecBias, g.CrossBias, g.Mem} {
		if n != nil {
			c.vals[n] = tensor.New(tensor.WithShape(n.Shape()...), tensor.Of(n.Dtype()))
		}
	}
	m.graphs[k] = c
	return c, nil
}

// view is c's models.GraphView with out as its root.
func (c *compiled) view(out *G.Node) *models.GraphView {
	v := &models.GraphView{Out: out, Grads: c.grads, ParamIdx: c.idx, Key: c, Drop: c.drop}
	g := c.g
	for _, n := range []*G.Node{g.Src, g.DecIn, g.Labels, g.EncBias, g.DecBias, g.CrossBias, g.Mem} {
		if n != nil {
			v.Inputs = append(v.Inputs, n)
			v.Values = append(v.Values, c.vals[n])
		}
	}
	return v
}

// set copies ids or floats into the value of input n.
func (c *compiled) set(n *G.Node, ints []int, floats []float32) {
	if n == nil {
		return
	}
	if ints != nil {
		copy(c.vals[n].Data().([]int), ints)
	} else {
		copy(c.vals[n].Data().([]float32), floats)
	}
}

// setMasks fills the attention masks for the given real lengths.
func (c *compiled) setMasks(srcLen, decLen []int) {
	enc, dec, cross := c.g.FillMasks(srcLen, decLen)
	for n, t := range map[*G.Node]*tensor.Dense{c.g.EncBias: enc, c.g.DecBias: dec, c.g.CrossBias: cross} {
		if n != nil {
			c.set(n, nil, t.Data().([]float32))
		}
	}
}

// batchView is the training (grads: with the dropout masks of step) or
// evaluation graph over bt with its inputs set.
func (m *Model) batchView(bt *models.Batch, eps float64, grads bool, step int) (*models.GraphView, error) {
	src, S, srcLen, err := m.ids.source(bt.Src, bt.B, bt.S)
	if err != nil {
		return nil, err
	}
	dec, lab, T, decLen := m.ids.decoder(bt.DecIn, bt.Tgt, bt.B, bt.T)
	c, err := m.graph(graphKey{part: Whole, b: bt.B, s: S, t: T, labels: true, grads: grads, eps: float32(eps)})
	if err != nil {
		return nil, err
	}
	c.set(c.g.Src, src, nil)
	c.set(c.g.DecIn, dec, nil)
	c.set(c.g.Labels, lab, nil)
	c.setMasks(srcLen, decLen)
	if c.drop != nil {
		c.drop.SetStep(uint64(step))
	}
	return c.view(c.g.Loss), nil
}

// encodeView is the encoder graph over compbench source ids [B*S], and the
// memory's source length and row lengths.
func (m *Model) encodeView(src []int, B, S int) (*models.GraphView, int, []int, error) {
	hs, S2, srcLen, err := m.ids.source(src, B, S)
	if err != nil {
		return nil, 0, nil, err
	}
	c, err := m.graph(graphKey{part: Encoder, b: B, s: S2})
	if err != nil {
		return nil, 0, nil, err
	}
	c.set(c.g.Src, hs, nil)
	c.setMasks(srcLen, make([]int, B))
	return c.view(c.g.Memory), S2, srcLen, nil
}

// decodeView is the decoder graph over mem and compbench decoder inputs
// decIn [B*T], and the model's position of compbench's position pos.
func (m *Model) decodeView(mem *models.Memory, decIn []int, T, pos int) (*models.GraphView, int, int, error) {
	dec, _, T2, _ := m.ids.decoder(decIn, nil, mem.B, T)
	pos2 := pos + len(m.ids.tgtPre)
	if pos2 >= T2 {
		return nil, 0, 0, fmt.Errorf("decoding position %d: the model has %d positions; lower --max-len", pos2, m.ids.limit)
	}
	c, err := m.graph(graphKey{part: Decoder, b: mem.B, s: mem.S, t: T2})
	if err != nil {
		return nil, 0, 0, err
	}
	if want := c.vals[c.g.Mem].Shape().TotalSize(); len(mem.Data) != want {
		return nil, 0, 0, fmt.Errorf("decode: memory of %d floats, the graph wants %d", len(mem.Data), want)
	}
	c.set(c.g.DecIn, dec, nil)
	c.set(c.g.Mem, nil, mem.Data)
	decLen := make([]int, mem.B)
	for b := range decLen {
		decLen[b] = pos2 + 1
	}
	c.setMasks(mem.SrcLen, decLen)
	return c.view(c.g.Logits), T2, pos2, nil
}
