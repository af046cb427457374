package report

import (
	"bytes"
	"strings"
	"testing"

	"compbench/eval"
	"compbench/sweep"
)

// TestCategoryTable: runs whose results carry eval --by category's
// breakdown get a table of mean ± sd over seeds per category, groups
// first in eval's order; a report without breakdowns has none.
func TestCategoryTable(t *testing.T) {
	run := func(model string, seed uint64, lex, gen, in float64) Run {
		return Run{Result: sweep.Result{
			Cell:   sweep.Cell{Name: "cogs." + model, Data: "cogs", Model: model, Seed: seed},
			DevEM:  -1,
			TestEM: gen,
			ByCategory: &eval.Breakdown{
				Categories: []eval.GroupScore{{Name: "prim_to_subj_proper", Accuracy: lex}, {Name: "cp_recursion", Accuracy: 0}, {Name: "in_distribution", Accuracy: in}},
				Groups:     []eval.GroupScore{{Name: "in_distribution", Accuracy: in}, {Name: "lexical", Accuracy: lex}, {Name: "generalization", Accuracy: gen}, {Name: "structural", Accuracy: 0}},
			},
		}}
	}
	r := &Report{Title: "cogs", Runs: []Run{
		run("transformer", 1, 0.2, 0.1, 0.9), run("transformer", 2, 0.4, 0.3, 1.0), run("lstm-attention", 1, 0.5, 0.5, 0.95),
	}}
	r.group()
	h, rows, ok := r.categoryTable()
	if !ok {
		t.Fatal("no category table")
	}
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"header", strings.Join(h, "|"), "category|cogs transformer (n=2)|cogs lstm-attention (n=1)"},
		{"row order", firstColumn(rows), "lexical,structural,generalization,in_distribution,cp_recursion,prim_to_subj_proper"},
		{"in_distribution once", strings.Join(rows[3][1:], "|"), "95.0 ± 7.1|95.0"},
		{"lexical", strings.Join(rows[0][1:], "|"), "30.0 ± 14.1|50.0"},
		{"generalization", strings.Join(rows[2][1:], "|"), "20.0 ± 14.1|50.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("%q, want %q", c.got, c.want)
			}
		})
	}
	t.Run("markdown and html", func(t *testing.T) {
		var md, page bytes.Buffer
		if err := r.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteHTML(&page, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "### Exact match by category") || !strings.Contains(page.String(), "<h2>Exact match by category</h2>") {
			t.Errorf("the table is missing:\n%s", md.String())
		}
	})
	t.Run("none", func(t *testing.T) {
		plain := &Report{Runs: []Run{{Result: sweep.Result{Cell: sweep.Cell{Name: "x", Data: "d", Model: "m"}, TestEM: 0.5}}}}
		plain.group()
		if _, _, ok := plain.categoryTable(); ok {
			t.Error("a table without breakdowns")
		}
	})
}

func firstColumn(rows [][]string) string {
	var c []string
	for _, r := range rows {
		c = append(c, r[0])
	}
	return strings.Join(c, ",")
}
