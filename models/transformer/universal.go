package transformer

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"compbench/models"
	"compbench/ops"
)

// The Universal Transformer (Dehghani et al. 2018), the third baseline of
// Keysers et al. (2020, §5 and App. E, Table 6), as tensor2tensor's
// universal_transformer with recurrence_type "basic", which Keysers et al.
// ran:
//
//   - One encoder layer and one decoder layer (num_inrecurrence_layers 1),
//     each applied Config.UTSteps times with the same weights
//     (num_rec_steps, which is num_hidden_layers: 6 in Table 6). The
//     layer is this package's pre-LN layer, and each stack keeps its final
//     LayerNorm after the last step.
//   - Before every step t the coordinate embedding is added to the state:
//     the sinusoidal positions (add_position_timing_signal: at every step,
//     and so not to the embeddings) and a learned embedding of the step
//     (add_step_timing_signal, step_timing_signal_type "learned").
//     tensor2tensor draws the step embedding from N(0, 1/d) and scales it
//     by sqrt(d); this package's embeddings carry no sqrt(d) factor (see
//     New), so the step embedding is drawn from N(0, 1). With relative
//     attention there are no positions to add, only the step.
//   - The step embedding is one [D] parameter per step ("enc.step<t>",
//     "dec.step<t>"), added as a bias row, so its gradient is the column
//     sum of the state's.
//
// With UTSteps 1 and zero step embeddings the model computes exactly what
// a 1-layer Transformer with the same weights computes (TestUniversalOneStep);
// for a seed its weights are the 1-layer Transformer's, followed by the
// step embeddings.
//
// With Config.ACT, adaptive computation time (Graves 2016; Dehghani et
// al. §2.2), as tensor2tensor's universal_transformer_act with act_type
// "basic": before each step's layer, a halting unit gives each position a
// probability p = sigmoid(state·w + b) (bias initialised to 1,
// act_halting_bias_init); a position keeps running while its summed
// probability stays at or below 1 - ε (ε = 0.01, act_epsilon), and in the
// step it would pass that it halts with the remainder R = 1 - the sum so
// far. Each step's layer output y is weighted by w = p (running) or R
// (halting) or 0 (halted) and folded into the stack's output as
// out = y·w + out·(1 - w), tensor2tensor's update (not Graves's Σ w·y: an
// earlier step's output keeps the product of (1 - w) of the later steps),
// and the state carried to the next step is the layer's output. UTSteps
// is the most steps (act_max_steps, which tensor2tensor sets to twice
// num_hidden_layers: give --ut-steps 12 for that); a graph runs all of
// them, which changes nothing for halted positions, whose weights are 0,
// and equals tensor2tensor's loop, which stops when every position has
// halted or the step limit is reached. The ponder cost, the mean over
// positions of steps taken plus remainder, times ACTLossWeight, is added
// to the training loss for each stack. Decision: the mean is over real
// positions (tensor2tensor's runs over the padded batch too, so its cost
// would depend on how a batch is padded). The halting decisions are step
// functions and carry no gradient; p and R do.
//
// Incremental decoding keeps one key/value cache per step, because a
// step's keys depend on the state it sees, not only on the shared weights.

// ACT's constants (tensor2tensor's act_epsilon, act_loss_weight and
// act_halting_bias_init).
const (
	actEpsilon    = 0.01
	ACTLossWeight = 0.01
	actHaltBias   = 1.0
)

// recur makes m's stacks recurrent: the one encoder and decoder layer New
// made, repeated UTSteps times, and a step embedding per step.
func (m *Model) recur(pm paramMaker) {
	T, d := m.Cfg.UTSteps, m.Cfg.Dim
	enc, dec := m.enc[0], m.dec[0]
	m.enc, m.dec = make([]layerIDs, T), make([]layerIDs, T)
	for t := 0; t < T; t++ {
		m.enc[t], m.dec[t] = enc, dec
	}
	for _, stack := range []struct {
		name string
		ids  *[]int
		halt *[2]int
	}{{"enc", &m.encStep, &m.encHalt}, {"dec", &m.decStep, &m.decHalt}} {
		for t := 0; t < T; t++ {
			id := pm.p.Add(fmt.Sprintf("%s.step%d", stack.name, t), tensor.Shape{d}, models.Normal(pm.rng, 1))
			*stack.ids = append(*stack.ids, id)
		}
		if m.Cfg.ACT {
			*stack.halt = [2]int{
				pm.p.Add(stack.name+".halt.w", tensor.Shape{d, 1}, models.Xavier(pm.rng, d, 1)),
				pm.p.Add(stack.name+".halt.b", tensor.Shape{1}, models.Constant(actHaltBias)),
			}
		}
	}
}

// recurrence runs a Universal Transformer stack's steps over the embedded
// state x [N, D]: before step t its timing (positions pos, step
// embedding steps[t]), then layer(t, state). Without a halting unit the
// output is the last step's state; with one (halt[0] >= 0), ACT's weighted
// sum of the step outputs, and the stack's ponder times go to b.ponder.
func (b *builder) recurrence(x, pos *G.Node, steps []int, halt [2]int, layer func(int, *G.Node) *G.Node) *G.Node {
	if halt[0] < 0 {
		for t, step := range steps {
			x = layer(t, b.timing(x, pos, step)) // [N, D]
		}
		return x
	}
	n, d := x.Shape()[0], x.Shape()[1]
	one, minus := G.NewConstant(float32(1)), G.NewConstant(float32(-1))
	thr := G.NewConstant(float32(1 - actEpsilon))
	// oneMinus is 1 - a as 1 + (-1)⊙a: Gorgonia differentiates a
	// subtraction with a negation, which the executor has no kernel for.
	oneMinus := func(a *G.Node) *G.Node { return b.must(G.Add(one, b.must(G.HadamardProd(minus, a)))) }
	// p = softmax([z, 0])[0] = sigmoid(z): the executor's attention softmax
	// over pairs; pick and spread are constant matrices.
	pick := b.constant("act.pick", []float32{1, 0}, 1, 2)   // [1, 2]
	first := b.constant("act.first", []float32{1, 0}, 2, 1) // [2, 1]
	spread := b.constant("act.spread", ones(d), 1, d)       // [1, D]
	var hp, rem, nup, acc *G.Node                           // [N, 1] ×3, [N, D]; nil: zero
	add := func(a, c *G.Node) *G.Node {                     // a + c, a nil meaning 0
		if a == nil {
			return c
		}
		return b.must(G.Add(a, c))
	}
	mul := func(a, c *G.Node) *G.Node { // a ⊙ c, a nil meaning 1
		if a == nil {
			return c
		}
		return b.must(G.HadamardProd(a, c))
	}
	for t, step := range steps {
		x = b.timing(x, pos, step) // [N, D]
		if b.err != nil {
			return x
		}
		z := b.linear(x, halt[0], halt[1])                                          // [N, 1]
		pair := b.must(G.Reshape(b.must(G.Mul(z, pick)), tensor.Shape{1, 1, n, 2})) // [1, 1, N, 2]
		if b.err != nil {
			return x
		}
		pair = b.must(ops.AttentionSoftmax(pair, nil, nil))                    // [1, 1, N, 2]
		p := b.must(G.Mul(b.must(G.Reshape(pair, tensor.Shape{n, 2})), first)) // [N, 1]
		var run *G.Node                                                        // still running; nil: all
		if hp != nil {
			run = oneMinus(b.must(G.Gte(hp, one, true))) // [N, 1]
		}
		below := b.must(G.Gte(thr, add(hp, mul(run, p)), true)) // [N, 1] sum stays at or below 1-ε
		if b.err != nil {
			return x
		}
		keep := mul(run, below)                                                                  // [N, 1] runs on
		halted := mul(run, oneMinus(below))                                                      // [N, 1] halts now
		hp = add(hp, b.must(G.HadamardProd(p, keep)))                                            // [N, 1]
		rem = add(rem, b.must(G.HadamardProd(halted, oneMinus(hp))))                             // [N, 1]
		hp = b.must(G.Add(hp, b.must(G.HadamardProd(halted, rem))))                              // [N, 1]
		nup = add(nup, b.must(G.Add(keep, halted)))                                              // [N, 1]
		u := b.must(G.Add(b.must(G.HadamardProd(p, keep)), b.must(G.HadamardProd(halted, rem)))) // [N, 1]
		if b.err != nil {
			return x
		}
		w := b.must(G.Mul(u, spread)) // [N, D]
		x = layer(t, x)               // [N, D]
		if b.err != nil {
			return x
		}
		upd := b.must(G.HadamardProd(x, w)) // [N, D]
		if acc == nil {
			acc = upd
		} else {
			acc = b.must(G.Add(upd, b.must(G.HadamardProd(acc, oneMinus(w))))) // [N, D]
		}
	}
	b.ponder = append(b.ponder, b.must(G.Add(nup, rem))) // [N, 1]
	return acc
}

// constant is a fixed matrix of the graph (a value, not a weight).
func (b *builder) constant(name string, v []float32, shape ...int) *G.Node {
	return G.NewTensor(b.g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name),
		G.WithValue(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))))
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

// ponderCost is the stacks' ponder times weighted by real[k] [1, N_k]
// (fillReal) and summed over the stacks, in the shape of the loss.
func (b *builder) ponderCost(shape tensor.Shape, real ...*G.Node) *G.Node {
	if len(real) != len(b.ponder) {
		b.must(nil, fmt.Errorf("ACT: %d ponder vectors for %d position weights", len(b.ponder), len(real)))
		return nil
	}
	var sum *G.Node
	for k, pt := range b.ponder {
		c := b.must(G.Mul(real[k], pt)) // [1, 1]
		if b.err != nil {
			return nil
		}
		c = b.must(G.Reshape(c, shape)) // the loss's
		if sum == nil {
			sum = c
		} else {
			sum = b.must(ops.Add(sum, c))
		}
	}
	return sum
}

// timing adds the coordinate embedding of one recurrent step to the state
// x [N, D]: the positions pos [N, D] (nil with relative attention) and the
// step's embedding, broadcast over the rows.
func (b *builder) timing(x, pos *G.Node, step int) *G.Node {
	if b.err != nil {
		return x
	}
	if pos != nil {
		x = b.must(ops.Add(x, pos)) // [N, D]
		if b.err != nil {
			return x
		}
	}
	return b.must(ops.AddBias(x, b.param(step))) // [N, D]
}
