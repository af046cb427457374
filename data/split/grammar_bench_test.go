package split

import (
	"context"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/scfg"
)

// benchGrammar is a COVR-sized grammar (recursive references, quantifiers,
// comparisons, attributes) written for the benchmark.
const benchGrammar = `answer -> boolean | query
query -> count_q | attr_q
count_q -> 'count' '(' ref ')' & 'how many' ref
attr_q -> 'query_attr' '[' attr ']' '(' ref ')' & 'what is the' attr 'of' ref
boolean -> single | pair
pair -> 'and' '(' single ',' single ')' & 'both' single 'and' single
pair -> 'or' '(' single ',' single ')' & 'either' single 'or' single
single -> 'exists' '(' ref ')' & 'there is' ref
single -> quant '(' ref ',' ref ')' & quant 'of' ref 'are' ref
single -> cmp '(' count_q ',' number ')' & count_q cmp number
quant -> 'all' | 'most' | 'some' | 'none'
cmp -> 'eq' & 'is' | 'gt' & 'is more than' | 'lt' & 'is less than'
number -> '2' | '3' | '4'
ref -> find | filter | relate | 'scene' '(' ')' & 'things'
find -> 'find' '(' noun ')' & noun
filter -> 'filter' '(' value ',' ref ')' & value ref
relate -> 'with_relation' '(' find ',' rel ',' ref ')' & find 'that is' rel ref
noun -> 'dog' | 'cat' | 'mouse' | 'animal'
rel -> 'chasing' | 'playing with' | 'looking at'
attr -> 'color' | 'shape'
value -> 'black' | 'white' | 'brown' | 'round' | 'square'
`

// BenchmarkGrammarCandidates evaluates every candidate grammar split of a
// 20,000-example pool.
func BenchmarkGrammarCandidates(b *testing.B) {
	g, err := scfg.Parse(strings.NewReader(benchGrammar))
	if err != nil {
		b.Fatal(err)
	}
	cfg := scfg.DefaultConfig()
	cfg.N, cfg.MaxDepth, cfg.Seed = 20000, 10, 1
	var pool []data.Record
	if err := scfg.Generate(context.Background(), g, cfg, func(r *data.Record) error {
		pool = append(pool, *r)
		return nil
	}, nil); err != nil {
		b.Fatal(err)
	}
	s, err := NewGrammarSplitter(g, pool, DefaultGrammarConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Candidates(nil)
	}
	b.ReportMetric(float64(s.Len()), "candidates")
}
