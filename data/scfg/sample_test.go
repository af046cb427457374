package scfg

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"compbench/data"
)

var update = flag.Bool("update", false, "rewrite golden files")

func depth(t *data.Tree) int {
	d := 0
	for _, c := range t.Children {
		d = max(d, depth(c))
	}
	return d + 1
}

func generate(t *testing.T, g *Grammar, cfg GenConfig) []data.Record {
	t.Helper()
	var recs []data.Record
	err := Generate(context.Background(), g, cfg, func(r *data.Record) error {
		recs = append(recs, *r)
		return nil
	}, nil)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return recs
}

func encode(t *testing.T, recs []data.Record) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := data.NewEncoder(&b)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestGenerateGolden(t *testing.T) {
	g, err := ParseFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.N, cfg.MaxDepth, cfg.Seed = 25, 6, 7
	got := encode(t, generate(t, g, cfg))
	const golden = "testdata/tiny.golden.jsonl"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s; rerun with -update if the change is intended\n%s", golden, got)
	}
}

func TestGenerateDeterministic(t *testing.T) {
	g, err := ParseFile("testdata/tiny.txt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.N = 200
	a := encode(t, generate(t, g, cfg))
	b := encode(t, generate(t, g, cfg))
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different bytes")
	}
	cfg.Seed = 1
	if c := encode(t, generate(t, g, cfg)); bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same bytes")
	}
}

func TestRender(t *testing.T) {
	g := mustParse(t, `q -> 'query_attr' '[' a ']' '(' r ')' & 'the' a 'of' r
a -> 'color'
r -> 'with' '(' n ',' rel ')' & n 'that is' rel
n -> 'scene' '(' ')' & ' '
rel -> 'playing with'
`)
	d, err := NewSampler(g).Sample(data.NewRand(0), "q", 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := "query_attr[color] ( with ( scene ( ) , playing_with ) )"; d.Program != want {
		t.Errorf("program %q, want %q", d.Program, want)
	}
	if want := "the color of that is playing with"; d.Utterance != want {
		t.Errorf("utterance %q, want %q", d.Utterance, want)
	}
	if want := "q -> 'query_attr' '[' a ']' '(' r ')'(a -> 'color', r -> 'with' '(' n ',' rel ')'(n -> 'scene' '(' ')', rel -> 'playing with'))"; d.Tree.String() != want {
		t.Errorf("tree %s, want %s", d.Tree, want)
	}
}

// The k-th occurrence of a non-terminal on one side is the same subtree as
// its k-th occurrence on the other, whatever the order of the sides.
func TestLinkedNonTerminals(t *testing.T) {
	g := mustParse(t, `s -> f '(' t ',' t ',' u ')' & u 'then' t 'and' t 'by' f
f -> 'F' | 'G'
t -> 'a' | 'b' | 'c'
u -> 'x' | 'y'
`)
	s := NewSampler(g)
	rng := data.NewRand(3)
	for i := 0; i < 100; i++ {
		d, err := s.Sample(rng, "s", 2)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Fields(d.Program) // F ( t1 , t2 , u )
		want := strings.Join([]string{p[6], "then", p[2], "and", p[4], "by", p[0]}, " ")
		if d.Utterance != want {
			t.Fatalf("program %q gave utterance %q, want %q", d.Program, d.Utterance, want)
		}
	}
}

func TestMaxDepth(t *testing.T) {
	g := mustParse(t, `s -> 'go' r & r
r -> 'x' | 'w' '(' r ')' & 'wrap' r | 'p' '(' r ',' r ')' & r 'and' r
`)
	s := NewSampler(g)
	if d, _ := s.MinDepth("s"); d != 2 {
		t.Fatalf("min depth %d, want 2", d)
	}
	for _, maxD := range []int{2, 3, 5, 8} {
		t.Run("depth", func(t *testing.T) {
			rng := data.NewRand(uint64(maxD))
			deepest := 0
			for i := 0; i < 300; i++ {
				d, err := s.Sample(rng, "s", maxD)
				if err != nil {
					t.Fatal(err)
				}
				dd := depth(d.Tree)
				if dd > maxD {
					t.Fatalf("tree %s has depth %d > %d", d.Tree, dd, maxD)
				}
				deepest = max(deepest, dd)
			}
			if deepest != maxD {
				t.Errorf("deepest tree %d, want the bound %d to be reached", deepest, maxD)
			}
		})
	}
	if _, err := s.Sample(data.NewRand(0), "s", 1); err == nil || !strings.Contains(err.Error(), "needs depth 2") {
		t.Errorf("depth 1: error %v, want 'needs depth 2'", err)
	}
}

func TestNonTerminating(t *testing.T) {
	g := mustParse(t, "s -> 'a' | t\nt -> t 'b'\n")
	if _, err := NewSampler(g).Sample(data.NewRand(0), "t", 5); err == nil || !strings.Contains(err.Error(), "never derives") {
		t.Errorf("error %v, want 'never derives'", err)
	}
	// s can still be sampled: its non-terminating rule is never chosen.
	for i := 0; i < 20; i++ {
		d, err := NewSampler(g).Sample(data.NewRand(uint64(i)), "s", 5)
		if err != nil || d.Program != "a" {
			t.Fatalf("got %+v, %v; want program a", d, err)
		}
	}
}

func TestUniformChoice(t *testing.T) {
	g := mustParse(t, "s -> 'a' | 'b' | 'c' | 'd'\n")
	s := NewSampler(g)
	rng := data.NewRand(11)
	counts := map[string]int{}
	const n = 8000
	for i := 0; i < n; i++ {
		d, err := s.Sample(rng, "s", 1)
		if err != nil {
			t.Fatal(err)
		}
		counts[d.Program]++
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if c := counts[k]; c < n/4-200 || c > n/4+200 {
			t.Errorf("%s drawn %d times of %d, want about %d", k, c, n, n/4)
		}
	}
}

func TestDedupe(t *testing.T) {
	g := mustParse(t, "s -> 'a' | 'b' | 'c'\n")
	cfg := DefaultConfig()
	cfg.N, cfg.Dedupe = 3, true
	recs := generate(t, g, cfg)
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.Output] {
			t.Errorf("output %q repeats", r.Output)
		}
		seen[r.Output] = true
	}
	cfg.N = 4
	err := Generate(context.Background(), g, cfg, func(*data.Record) error { return nil }, nil)
	if err == nil || !strings.Contains(err.Error(), "only 3 distinct") {
		t.Errorf("error %v, want 'only 3 distinct'", err)
	}
}

func TestGenConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*GenConfig)
	}{
		{"zero n", func(c *GenConfig) { c.N = 0 }},
		{"zero depth", func(c *GenConfig) { c.MaxDepth = 0 }},
		{"no prefix", func(c *GenConfig) { c.IDPrefix = "" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			if c.Validate() == nil {
				t.Error("want an error")
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	g := mustParse(t, "s -> 'a'\n")
	c := DefaultConfig()
	c.Start = "nope"
	if err := Generate(context.Background(), g, c, func(*data.Record) error { return nil }, nil); err == nil {
		t.Error("unknown start: want an error")
	}
}

// A rule without "&" gives the utterance its words, not its brackets.
func TestImplicitUtterance(t *testing.T) {
	g := mustParse(t, `s -> 'count' '(' n ',' e ')'
n -> 'dog' | 'cat' & 'kitten'
e -> '(' ')'
`)
	s := NewSampler(g)
	got := map[string]string{}
	rng := data.NewRand(2)
	for i := 0; i < 50; i++ {
		d, err := s.Sample(rng, "s", 3)
		if err != nil {
			t.Fatal(err)
		}
		got[d.Program] = d.Utterance
	}
	want := map[string]string{
		"count ( dog , ( ) )": "count dog",
		"count ( cat , ( ) )": "count kitten",
	}
	for p, u := range want {
		if got[p] != u {
			t.Errorf("program %q: utterance %q, want %q", p, got[p], u)
		}
	}
	if len(got) != len(want) {
		t.Errorf("programs %v, want %v", got, want)
	}
}

// BenchmarkGenerate samples records from the test grammar.
func BenchmarkGenerate(b *testing.B) {
	g, err := ParseFile("testdata/tiny.txt")
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.N, cfg.MaxDepth = 10000, 8
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := Generate(context.Background(), g, cfg, func(*data.Record) error { return nil }, nil)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cfg.N*b.N)/b.Elapsed().Seconds(), "records/s")
}
