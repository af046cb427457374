package report

import (
	"sort"
	"strconv"

	"compbench/eval"
)

// categoryNote explains the per-category table.
const categoryNote = "Zero-shot test exact match per category of the test records (eval --by category), " +
	"mean ± sample standard deviation over seeds, in percent; n is the seeds. For COGS (Kim & Linzen 2020), " +
	"generalization is the 21 cases of gen.tsv together, lexical and structural its two groups, and " +
	"in_distribution test.tsv's records."

// categoryTable is exact match per category and group (rows) for each
// group of runs whose results carry a breakdown (columns); ok is false
// when none does. Groups (lexical, structural, ...) come first, in
// eval's order, then the categories by name; a category that is also a
// group (COGS's in_distribution) appears once, as the group.
func (r *Report) categoryTable() (header []string, rows [][]string, ok bool) {
	type col struct {
		name string
		acc  map[string][]float64
	}
	var cols []col
	var groupNames, catNames []string
	seen := map[string]bool{}
	note := func(names *[]string, n string) {
		if !seen[n] {
			seen[n] = true
			*names = append(*names, n)
		}
	}
	for _, g := range r.Groups {
		if g.Pooled {
			continue
		}
		c := col{name: g.Cell.Group(), acc: map[string][]float64{}}
		for _, i := range g.Runs {
			b := r.Runs[i].Result.ByCategory
			if b == nil {
				continue
			}
			for _, s := range b.Groups {
				note(&groupNames, s.Name)
				c.acc[s.Name] = append(c.acc[s.Name], s.Accuracy)
			}
			for _, s := range b.Categories {
				if isGroup(b, s.Name) {
					continue // in_distribution: the group is this one case
				}
				note(&catNames, s.Name)
				c.acc[s.Name] = append(c.acc[s.Name], s.Accuracy)
			}
		}
		if len(c.acc) > 0 {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil, nil, false
	}
	sort.SliceStable(groupNames, func(i, j int) bool { return groupRank(groupNames[i]) < groupRank(groupNames[j]) })
	sort.Strings(catNames)
	header = []string{"category"}
	for _, c := range cols {
		n := 0
		for _, v := range c.acc {
			n = max(n, len(v))
		}
		header = append(header, c.name+" (n="+strconv.Itoa(n)+")")
	}
	pc := column{percent: true}
	for _, name := range append(groupNames, catNames...) {
		row := []string{name}
		for _, c := range cols {
			row = append(row, pc.format(StatOf(c.acc[name])))
		}
		rows = append(rows, row)
	}
	return header, rows, true
}

// isGroup reports whether name is one of b's groups.
func isGroup(b *eval.Breakdown, name string) bool {
	for _, g := range b.Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

// groupRank orders eval's group names as eval.ByCategory lists them.
func groupRank(name string) int {
	for i, n := range []string{eval.COGSLexical, eval.COGSStructural, eval.COGSGeneralization, eval.COGSInDistribution, eval.GroupOther} {
		if n == name {
			return i
		}
	}
	return 99
}
