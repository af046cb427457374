package robustfill

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"compbench/data"
)

func mustSampler(t testing.TB) *Sampler {
	t.Helper()
	s, err := NewSampler(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkTask asserts the invariants every sampled task has.
func checkTask(t *testing.T, task *Task, n int) {
	t.Helper()
	if len(task.Program) != n {
		t.Fatalf("%d expressions, want %d", len(task.Program), n)
	}
	if len(task.Inputs) != 4 || len(task.Outputs) != 4 {
		t.Fatalf("%d inputs, %d outputs", len(task.Inputs), len(task.Outputs))
	}
	same := true
	for j, in := range task.Inputs {
		if in == "" || len(in) > 20 {
			t.Fatalf("input %q", in)
		}
		for k := 0; k < len(in); k++ {
			if !IsCharacter(in[k]) {
				t.Fatalf("input %q has %q", in, in[k])
			}
		}
		out, err := task.Program.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		if out != task.Outputs[j] {
			t.Fatalf("output %q, program gives %q", task.Outputs[j], out)
		}
		if out == "" {
			t.Fatalf("empty output for %q", in)
		}
		same = same && out == in
	}
	if same {
		t.Fatalf("every output equals its input: %s", task.Program.Tokens())
	}
	rec := task.Record()
	p, err := ParseTokens(rec.Output)
	if err != nil || !p.Equal(task.Program) {
		t.Fatalf("output %q does not parse back: %v", rec.Output, err)
	}
	q, err := ParseJSON(rec.Program)
	if err != nil || !q.Equal(task.Program) {
		t.Fatalf("program %s does not parse back: %v", rec.Program, err)
	}
	if strings.Join(rec.Parts, " | ") != rec.Output {
		t.Fatalf("parts %q vs output %q", rec.Parts, rec.Output)
	}
	in, out, err := DecodeIO(rec.Input)
	if err != nil || strings.Join(in, "\n") != strings.Join(task.Inputs, "\n") || strings.Join(out, "\n") != strings.Join(task.Outputs, "\n") {
		t.Fatalf("input %q does not decode to the examples: %v", rec.Input, err)
	}
}

func TestSampleInvariants(t *testing.T) {
	s := mustSampler(t)
	for pool := PoolAll; pool < numPools; pool++ {
		t.Run(poolName(pool), func(t *testing.T) {
			rng := data.NewRand(uint64(pool))
			for i := range 300 {
				n := 1 + i%10
				task, err := s.Sample(rng, Spec{Pools: repeat(pool, n)})
				if err != nil {
					t.Fatal(err)
				}
				checkTask(t, &task, n)
				for _, e := range task.Program {
					if !inPool(&e, pool) {
						t.Fatalf("%v not in pool %s", e.Op, poolName(pool))
					}
				}
			}
		})
	}
}

func poolName(p Pool) string {
	return [...]string{"all", "no-compose", "no-compose-substring", "compose",
		"substring", "mod-or-const", "concepts"}[p]
}

func repeat(p Pool, n int) []Pool {
	ps := make([]Pool, n)
	for i := range ps {
		ps[i] = p
	}
	return ps
}

func inPool(e *Expr, p Pool) bool {
	sub, mod, con, com := e.Op.IsSubstring(), e.Op.IsModification(), e.Op == ConstStr, e.Op == Compose
	if com && !e.Mod.Op.IsModification() {
		return false
	}
	switch p {
	case PoolAll:
		return true
	case PoolNoCompose:
		return !com
	case PoolNoComposeSubstring:
		return !com || e.Arg.Op.IsModification()
	case PoolCompose:
		return com
	case PoolSubstring:
		return sub
	case PoolModOrConst:
		return mod || con
	case PoolConcepts:
		return sub || mod || con
	}
	return false
}

// Every operation and both Compose shapes occur under PoolAll.
func TestSampleCoversOperations(t *testing.T) {
	s := mustSampler(t)
	rng := data.NewRand(7)
	seen := map[string]bool{}
	for range 2000 {
		task, err := s.Sample(rng, Spec{Pools: repeat(PoolAll, 1)})
		if err != nil {
			t.Fatal(err)
		}
		e := task.Program[0]
		seen[e.Op.String()] = true
		if e.Op == Compose {
			seen["Compose/"+map[bool]string{true: "substring", false: "modification"}[e.Arg.Op.IsSubstring()]] = true
		}
	}
	for o := SubStr; o < numOps; o++ {
		if !seen[o.String()] {
			t.Errorf("%v never sampled", o)
		}
	}
	for _, k := range []string{"Compose/substring", "Compose/modification"} {
		if !seen[k] {
			t.Errorf("%s never sampled", k)
		}
	}
}

func TestSampleKeep(t *testing.T) {
	s := mustSampler(t)
	rng := data.NewRand(3)
	keep := func(p Program) bool { return p[0].Op == GetToken }
	for range 50 {
		task, err := s.Sample(rng, Spec{Pools: repeat(PoolAll, 2), Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		if task.Program[0].Op != GetToken {
			t.Fatalf("Keep ignored: %s", task.Program.Tokens())
		}
	}
	never := func(Program) bool { return false }
	cfg := DefaultConfig()
	cfg.MaxTries = 5
	s2, _ := NewSampler(cfg)
	if _, err := s2.Sample(rng, Spec{Pools: repeat(PoolAll, 1), Keep: never}); err == nil {
		t.Error("impossible constraint did not fail")
	}
}

func TestSampleDeterministic(t *testing.T) {
	draw := func() []byte {
		s := mustSampler(t)
		rng := data.NewRand(42)
		var b bytes.Buffer
		for i := range 50 {
			task, err := s.Sample(rng, Spec{Pools: repeat(PoolAll, 1+i%6)})
			if err != nil {
				t.Fatal(err)
			}
			rec := task.Record()
			j, _ := json.Marshal(rec)
			b.Write(j)
		}
		return b.Bytes()
	}
	if !bytes.Equal(draw(), draw()) {
		t.Error("same seed, different tasks")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Config)
	}{
		{"examples", func(c *Config) { c.NumExamples = 0 }},
		{"len", func(c *Config) { c.MaxInputLen = 0 }},
		{"len-big", func(c *Config) { c.MaxInputLen = 101 }},
		{"pieces", func(c *Config) { c.MaxInputPieces = 2 }},
		{"repeat", func(c *Config) { c.MaxRepeat = 0 }},
		{"tries", func(c *Config) { c.MaxTries = 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.mod(&cfg)
			if _, err := NewSampler(cfg); err == nil {
				t.Error("accepted")
			}
		})
	}
	s := mustSampler(t)
	if _, err := s.Sample(data.NewRand(1), Spec{}); err == nil {
		t.Error("empty spec accepted")
	}
	if _, err := s.Sample(data.NewRand(1), Spec{Pools: []Pool{numPools}}); err == nil {
		t.Error("bad pool accepted")
	}
}

// BenchmarkSample draws one task of 1-10 expressions from PoolAll.
func BenchmarkSample(b *testing.B) {
	s := mustSampler(b)
	rng := data.NewRand(1)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Sample(rng, Spec{Pools: repeat(PoolAll, 1+i%10)}); err != nil {
			b.Fatal(err)
		}
	}
}
