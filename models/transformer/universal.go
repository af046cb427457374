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
// Decision: adaptive computation time (recurrence_type "act") is not
// implemented; Keysers et al. name the basic model, and its halting needs
// ops the executor does not have. Incremental decoding keeps one
// key/value cache per step, because a step's keys depend on the state it
// sees, not only on the shared weights.

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
	}{{"enc", &m.encStep}, {"dec", &m.decStep}} {
		for t := 0; t < T; t++ {
			id := pm.p.Add(fmt.Sprintf("%s.step%d", stack.name, t), tensor.Shape{d}, models.Normal(pm.rng, 1))
			*stack.ids = append(*stack.ids, id)
		}
	}
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
