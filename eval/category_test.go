package eval

import (
	"fmt"
	"strings"
	"testing"

	"compbench/data"
)

func TestByCategory(t *testing.T) {
	type ex struct {
		cat     string
		correct bool
	}
	tests := []struct {
		name       string
		exs        []ex
		categories string // name n correct, in order
		groups     string
		err        string
	}{
		{"not COGS", []ex{{"b", true}, {"a", false}, {"b", false}}, "a 1 0, b 2 1", "", ""},
		{"only in_distribution", []ex{{"in_distribution", true}}, "in_distribution 1 1", "", ""},
		// By hand: lexical 1 of 2 (prim_to_inf_arg right, subj_to_obj_common
		// wrong), structural 2 of 3, in_distribution 0 of 1, other 1 of 1.
		{"COGS", []ex{
			{"pp_recursion", true}, {"cp_recursion", false}, {"obj_pp_to_subj_pp", true},
			{"prim_to_inf_arg", true}, {"subj_to_obj_common", false}, {"in_distribution", false}, {"primitive", true},
		}, "cp_recursion 1 0, in_distribution 1 0, obj_pp_to_subj_pp 1 1, pp_recursion 1 1, prim_to_inf_arg 1 1, primitive 1 1, subj_to_obj_common 1 0",
			"lexical 2 1, structural 3 2, generalization 5 3, in_distribution 1 0, other 1 1", ""},
		{"no category", []ex{{"a", true}, {"", true}}, "", "", `gold record 2 (id "r2") has no category`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gold := make([]data.Record, len(tc.exs))
			j := &Joined{}
			var exs []Example
			for i, e := range tc.exs {
				gold[i] = data.Record{ID: fmt.Sprintf("r%d", i+1), Category: e.cat}
				j.Pairs = append(j.Pairs, Pair{Gold: &gold[i]})
				exs = append(exs, Example{ID: gold[i].ID, Correct: e.correct})
			}
			b, err := ByCategory(j, exs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			show := func(gs []GroupScore) string {
				var s []string
				for _, g := range gs {
					if g.Accuracy != float64(g.Correct)/float64(g.N) {
						t.Errorf("%s: accuracy %v, want %d/%d", g.Name, g.Accuracy, g.Correct, g.N)
					}
					s = append(s, fmt.Sprintf("%s %d %d", g.Name, g.N, g.Correct))
				}
				return strings.Join(s, ", ")
			}
			if got := show(b.Categories); got != tc.categories {
				t.Errorf("categories %q, want %q", got, tc.categories)
			}
			if got := show(b.Groups); got != tc.groups {
				t.Errorf("groups %q, want %q", got, tc.groups)
			}
		})
	}
	if _, err := ByCategory(&Joined{Pairs: make([]Pair, 2)}, nil); err == nil {
		t.Error("judgements of another join accepted")
	}
}

// TestCOGSGroups: every case of COGS's gen.tsv has its group, 3 structural
// and 18 lexical, as Kim & Linzen group them.
func TestCOGSGroups(t *testing.T) {
	n := map[string]int{}
	for c, g := range cogsGroupOf {
		if COGSGroup(c) != g {
			t.Errorf("COGSGroup(%q) = %q", c, COGSGroup(c))
		}
		n[g]++
	}
	if n[COGSStructural] != 3 || n[COGSLexical] != 18 || n[COGSInDistribution] != 1 || COGSGroup("primitive") != "" {
		t.Errorf("group sizes %v", n)
	}
}
