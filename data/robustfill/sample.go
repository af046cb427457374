package robustfill

import (
	"fmt"
	"math/rand/v2"
)

// Config sets the shape of sampled tasks.
type Config struct {
	// NumExamples is the number of I/O examples per task (paper: 4).
	NumExamples int
	// MaxInputLen is the longest input string, in characters (paper: 20).
	MaxInputLen int
	// MaxInputPieces bounds the pieces in an input skeleton (at least 3).
	MaxInputPieces int
	// MaxRepeat bounds how often one piece of the skeleton repeats.
	MaxRepeat int
	// MaxTries bounds every rejection loop (arguments of one expression,
	// programs for one set of inputs, input sets for one task), so a
	// constraint that cannot be met ends in an error, never a hang.
	MaxTries int
}

// DefaultConfig is the paper's setting: 4 examples, inputs up to 20
// characters.
func DefaultConfig() Config {
	return Config{NumExamples: 4, MaxInputLen: 20, MaxInputPieces: 10, MaxRepeat: 3, MaxTries: 100}
}

// Validate checks the ranges.
func (c *Config) Validate() error {
	switch {
	case c.NumExamples < 1:
		return fmt.Errorf("robustfill config: NumExamples %d < 1", c.NumExamples)
	case c.MaxInputLen < 1 || c.MaxInputLen > MaxPosition:
		// SubStr positions are drawn within the inputs and must stay in Fig. 3's range.
		return fmt.Errorf("robustfill config: MaxInputLen %d not in 1..%d", c.MaxInputLen, MaxPosition)
	case c.MaxInputPieces < 3:
		return fmt.Errorf("robustfill config: MaxInputPieces %d < 3", c.MaxInputPieces)
	case c.MaxRepeat < 1:
		return fmt.Errorf("robustfill config: MaxRepeat %d < 1", c.MaxRepeat)
	case c.MaxTries < 1:
		return fmt.Errorf("robustfill config: MaxTries %d < 1", c.MaxTries)
	}
	return nil
}

// kind is what one expression sampler draws: an operation, or one of the
// two shapes of Compose.
type kind uint8

const (
	kindComposeMod kind = kind(numOps) + iota // Compose(modification, modification)
	kindComposeSub                            // Compose(modification, substring)
)

// Groups of kinds. A pool draws a group uniformly, then a kind in it
// uniformly, as the authors' sampler pools do.
var (
	substringKinds    = []kind{kind(SubStr), kind(GetSpan), kind(GetToken), kind(GetUpto), kind(GetFrom)}
	modificationKinds = []kind{kind(ToCase), kind(Replace), kind(Trim), kind(GetFirst), kind(GetAll),
		kind(Substitute), kind(SubstituteAll), kind(Remove), kind(RemoveAll)}
	modOrConstKinds = append(append([]kind(nil), modificationKinds...), kind(ConstStr))
	composeKinds    = []kind{kindComposeMod, kindComposeSub}
)

// Pool is a set of expressions one program position is drawn from.
type Pool uint8

// The pools of the generalization tasks (paper App. B).
const (
	// PoolAll: substring, modification, Compose or ConstStr, each a
	// quarter of the time.
	PoolAll Pool = iota
	// PoolNoCompose: substring, modification or ConstStr.
	PoolNoCompose
	// PoolNoComposeSubstring: like PoolAll, but Compose only as
	// Compose(modification, modification).
	PoolNoComposeSubstring
	// PoolCompose: Compose only, either shape.
	PoolCompose
	// PoolSubstring: the substring concept.
	PoolSubstring
	// PoolModOrConst: the non-substring concept (modifications and
	// ConstStr, all ten equally likely).
	PoolModOrConst
	// PoolConcepts: the substring or the non-substring concept, each half
	// of the time.
	PoolConcepts
	numPools
)

var poolGroups = [numPools][][]kind{
	PoolAll:                {substringKinds, modificationKinds, composeKinds, {kind(ConstStr)}},
	PoolNoCompose:          {substringKinds, modificationKinds, {kind(ConstStr)}},
	PoolNoComposeSubstring: {substringKinds, modificationKinds, {kindComposeMod}, {kind(ConstStr)}},
	PoolCompose:            {composeKinds},
	PoolSubstring:          {substringKinds},
	PoolModOrConst:         {modOrConstKinds},
	PoolConcepts:           {substringKinds, modOrConstKinds},
}

// Task is one sampled program with its I/O examples.
type Task struct {
	// Program is the program.
	Program Program
	// Inputs are the example inputs.
	Inputs []string
	// Outputs are Program's outputs on Inputs.
	Outputs []string
}

// Spec describes the programs of one distribution.
type Spec struct {
	// Pools gives the pool of each expression; its length is the
	// program's number of expressions.
	Pools []Pool
	// Keep, if not nil, must accept a program or it is drawn again (for
	// constraints on the whole program, such as "contains a Compose").
	Keep func(Program) bool
}

// Sampler draws tasks. It keeps buffers between calls, so one Sampler
// must not be used by two goroutines at once.
type Sampler struct {
	cfg Config
	ctx inputCtx
}

// NewSampler checks cfg and returns a sampler.
func NewSampler(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{cfg: cfg}, nil
}

// Sample draws fresh inputs and a program matching spec, rejecting tasks
// where any output is empty (the authors' generator requires non-empty
// outputs) or every output equals its input.
func (s *Sampler) Sample(rng *rand.Rand, spec Spec) (Task, error) {
	if len(spec.Pools) == 0 {
		return Task{}, fmt.Errorf("robustfill: spec with no expressions")
	}
	for _, p := range spec.Pools {
		if p >= numPools {
			return Task{}, fmt.Errorf("robustfill: invalid pool %d", p)
		}
	}
	c := &s.ctx
	outs := make([]string, s.cfg.NumExamples)
	for range s.cfg.MaxTries {
		c.sampleInputs(rng, &s.cfg)
	programs:
		for range s.cfg.MaxTries {
			prog := make(Program, len(spec.Pools))
			for i, pool := range spec.Pools {
				e, ok := s.expr(rng, pool)
				if !ok {
					continue programs
				}
				prog[i] = e
			}
			if spec.Keep != nil && !spec.Keep(prog) {
				continue
			}
			same := true
			for j, in := range c.inputs {
				outs[j] = prog.run(in, &c.sc)
				if outs[j] == "" {
					continue programs
				}
				same = same && outs[j] == in
			}
			if same {
				continue
			}
			return Task{
				Program: prog,
				Inputs:  append([]string(nil), c.inputs...),
				Outputs: append([]string(nil), outs...),
			}, nil
		}
	}
	return Task{}, fmt.Errorf("robustfill: no task met the constraints in %d tries", s.cfg.MaxTries*s.cfg.MaxTries)
}

// expr draws one expression from pool, for the current inputs.
func (s *Sampler) expr(rng *rand.Rand, pool Pool) (Expr, bool) {
	groups := poolGroups[pool]
	for range s.cfg.MaxTries {
		g := groups[rng.IntN(len(groups))]
		if e, ok := s.kindExpr(rng, g[rng.IntN(len(g))]); ok {
			return e, true
		}
	}
	return Expr{}, false
}

func (s *Sampler) kindExpr(rng *rand.Rand, k kind) (Expr, bool) {
	switch k {
	case kindComposeMod, kindComposeSub:
		argOps := substringKinds
		if k == kindComposeMod {
			argOps = modificationKinds
		}
		for range s.cfg.MaxTries {
			mod, ok1 := s.opExpr(rng, ops(modificationKinds, rng))
			arg, ok2 := s.opExpr(rng, ops(argOps, rng))
			if !ok1 || !ok2 {
				continue
			}
			e := Expr{Op: Compose, Mod: &mod, Arg: &arg}
			if s.nonEmpty(&e) {
				return e, true
			}
		}
		return Expr{}, false
	}
	return s.opExpr(rng, Op(k))
}

func ops(ks []kind, rng *rand.Rand) Op { return Op(ks[rng.IntN(len(ks))]) }

// nonEmpty reports whether e gives a non-empty output on every input.
func (s *Sampler) nonEmpty(e *Expr) bool {
	for _, in := range s.ctx.inputs {
		if e.eval(in, &s.ctx.sc) == "" {
			return false
		}
	}
	return true
}
