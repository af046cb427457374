package transformer

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"weak"

	G "gorgonia.org/gorgonia"

	"compbench/models"
)

// The tests' oracle: *Model implements models.Seq2Seq by running its
// graphs on Gorgonia's TapeMachine, which the engine is checked against.
// Production code runs the same graphs only through the engine (Engine).

// tapes holds a TapeMachine per graph in a model's cache, keyed by the
// model: compiling a machine costs far more than running the tests' small
// graphs. A machine goes once its graph has left the model's cache (or the
// model is gone), so the oracle keeps no evicted graph alive.
var tapes = struct {
	sync.Mutex
	of map[weak.Pointer[Model]]map[*compiled]G.VM
}{of: map[weak.Pointer[Model]]map[*compiled]G.VM{}}

// tape returns c's TapeMachine, built on first use.
func (m *Model) tape(c *compiled) G.VM {
	tapes.Lock()
	defer tapes.Unlock()
	for w := range tapes.of {
		if w.Value() == nil {
			delete(tapes.of, w)
		}
	}
	w := weak.Make(m)
	vms := tapes.of[w]
	if vms == nil {
		vms = map[*compiled]G.VM{}
		tapes.of[w] = vms
	}
	cached := make(map[*compiled]bool, len(m.graphs))
	for _, g := range m.graphs {
		cached[g] = true
	}
	for g := range vms {
		if !cached[g] && g != c {
			delete(vms, g)
		}
	}
	vm, ok := vms[c]
	if !ok {
		vm = G.NewTapeMachine(c.out.Graph())
		// Its finalizer (a no-op without CUDA) would keep a dropped
		// machine, its graph and every value alive one collection more.
		runtime.SetFinalizer(vm, nil)
		vms[c] = vm
	}
	return vm
}

// run runs c on its TapeMachine; the nodes keep their values.
func (m *Model) run(c *compiled) error {
	for n, v := range c.in.vals {
		if err := G.Let(n, v); err != nil {
			return err
		}
	}
	vm := m.tape(c)
	defer vm.Reset()
	return vm.RunAll()
}

// Loss implements models.Seq2Seq.
func (m *Model) Loss(bt *models.Batch, train bool, eps float64, step int) (float64, error) {
	kind := kindLoss
	if train {
		kind = kindTrain
	}
	c, err := m.batchGraph(kind, bt, eps)
	if err != nil {
		return 0, err
	}
	copy(c.in.vals[c.in.tgt].Data().([]int), bt.Tgt)
	if c.drop != nil {
		c.drop.SetStep(uint64(step))
	}
	if err := m.run(c); err != nil {
		return 0, fmt.Errorf("forward: %w", err)
	}
	loss := float64(scalar(c.out))
	if train {
		m.p.ZeroGrads()
		for k, g := range c.grads {
			gv, ok := g.Value().Data().([]float32)
			if !ok {
				return 0, fmt.Errorf("gradient of %s is not float32", m.p.Names[c.gradIdx[k]])
			}
			copy(m.p.Grads[c.gradIdx[k]], gv)
		}
	}
	return loss, nil
}

func scalar(n *G.Node) float32 {
	switch v := n.Value().Data().(type) {
	case float32:
		return v
	case []float32:
		return v[0]
	}
	return float32(math.NaN())
}

// Encode implements models.Seq2Seq.
func (m *Model) Encode(src []int, B, S int) (*models.Memory, error) {
	if m.Cfg.DoubleIO() {
		return m.encodeIO(src, B, S)
	}
	c, err := m.graph(graphKey{kind: kindEncode, b: B, s: S})
	if err != nil {
		return nil, err
	}
	srcLen := make([]int, B)
	for b := 0; b < B; b++ {
		for j := 0; j < S && src[b*S+j] != models.PadID; j++ {
			srcLen[b] = j + 1
		}
	}
	if err := m.setInputs(c, src, nil, srcLen, nil); err != nil {
		return nil, err
	}
	if err := m.run(c); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	out := append([]float32(nil), c.out.Value().Data().([]float32)...)
	return &models.Memory{B: B, S: S, Data: out, SrcLen: srcLen}, nil
}

// Logits implements models.Seq2Seq.
func (m *Model) Logits(mem *models.Memory, decIn []int, T, pos int) ([]float32, error) {
	c, err := m.graph(graphKey{kind: kindDecode, b: mem.B, s: mem.S, t: T})
	if err != nil {
		return nil, err
	}
	decLen := make([]int, mem.B)
	for b := range decLen {
		decLen[b] = pos + 1
	}
	if err := m.setInputs(c, nil, decIn, mem.SrcLen, decLen); err != nil {
		return nil, err
	}
	copy(c.in.vals[c.in.mem].Data().([]float32), mem.Data)
	if err := m.run(c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	all := c.out.Value().Data().([]float32) // [B*T, V]
	v := m.Cfg.TgtVocab
	out := make([]float32, mem.B*v)
	for b := 0; b < mem.B; b++ {
		copy(out[b*v:(b+1)*v], all[(b*T+pos)*v:(b*T+pos+1)*v])
	}
	return out, nil
}

// encodeIO is Encode for the double I/O encoder (ioMemory).
func (m *Model) encodeIO(src []int, B, S int) (*models.Memory, error) {
	c, ib, err := m.ioEncodeGraph(src, B, S)
	if err != nil {
		return nil, err
	}
	if err := m.run(c); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return m.ioMemory(ib, c.out.Value().Data().([]float32)), nil
}
