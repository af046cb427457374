package eval

import (
	"context"
	"testing"

	"compbench/data"
	"compbench/data/scfg"
	"compbench/data/structure"
)

func hasRule(t *data.Tree, rule string) bool {
	found := false
	t.Walk(func(n *data.Tree) { found = found || n.Label == rule })
	return found
}

// TestEasinessGrammarSplit: on generated COVR-style data, a grammar split
// holding out the rule pair (logic -> 'or', quant -> 'exists') leaves the
// parent-child structure (or, exists) unobserved; test examples with an
// unobserved parent-child structure get lower easiness than i.i.d.
// examples without one, and nosim never scores above full.
func TestEasinessGrammarSplit(t *testing.T) {
	g, err := scfg.ParseFile("testdata/covr-mini.txt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := scfg.DefaultConfig()
	cfg.N, cfg.Seed = 1500, 4
	var recs []data.Record
	if err := scfg.Generate(context.Background(), g, cfg, func(r *data.Record) error {
		recs = append(recs, *r)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	r := data.NewRand(1)
	var train, eval []*data.Tree
	for i := range recs {
		prog, err := structure.ParseBracketed(recs[i].Output)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if hasRule(recs[i].Tree, "logic -> 'or'") && hasRule(recs[i].Tree, "quant -> 'exists'") {
			eval = append(eval, prog) // grammar-split test
		} else if r.IntN(10) == 0 {
			eval = append(eval, prog) // i.i.d. held-out examples
		} else {
			train = append(train, prog)
		}
	}
	full, err := structure.Train(train, structure.Config{N: 2, Variant: structure.Full})
	if err != nil {
		t.Fatal(err)
	}
	nosim, _ := structure.Train(train, structure.Config{N: 2, Variant: structure.NoSim})
	rf, rn := full.Score(eval), nosim.Score(eval)
	var sumPC, sumNo float64
	var nPC, nNo int
	for i, res := range rf {
		if rn[i].Easiness > res.Easiness {
			t.Fatalf("example %d: nosim %v > full %v", i, rn[i].Easiness, res.Easiness)
		}
		pc := false
		for _, u := range res.Unobserved {
			pc = pc || u.Structure[:3] == "pc("
		}
		if pc {
			sumPC += res.Easiness
			nPC++
		} else {
			sumNo += res.Easiness
			nNo++
		}
	}
	if nPC == 0 || nNo == 0 {
		t.Fatalf("degenerate split: %d with unobserved parent-child, %d without", nPC, nNo)
	}
	mPC, mNo := sumPC/float64(nPC), sumNo/float64(nNo)
	t.Logf("mean easiness: %.3f over %d with unobserved parent-child, %.3f over %d without", mPC, nPC, mNo, nNo)
	if mPC >= mNo {
		t.Fatalf("easiness with unobserved parent-child %v not below %v", mPC, mNo)
	}
	if mPC == 0 {
		t.Fatalf("similar observed structures (and, exists), (or, most) should give positive easiness")
	}
}
