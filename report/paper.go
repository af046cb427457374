package report

import (
	"fmt"
	"sort"
	"strings"
)

// Paper is a table of published numbers shown beside ours (--paper).
type Paper struct {
	// Name is the --paper value; Source cites the table.
	Name, Source string
	Rows         []PaperRow
}

// PaperRow is one published cell. Data matches a cell's data name exactly,
// or every name it prefixes when it ends in "*" (mcd* for mcd1..mcd3,
// where the paper gives the mean over its MCD splits).
type PaperRow struct {
	Data, Model string
	// ZeroShot and FewShot are the numbers as printed (percent).
	ZeroShot, FewShot string
}

// Papers are the tables compbench knows, by --paper name.
var Papers = map[string]Paper{
	"shi-table1": {
		Name:   "shi-table1",
		Source: "Shi et al. (2023), Table 1, SCAN: test exact match zero-shot and few-shot, mean ± standard deviation over 3 trials (the columns of two tasks: length generalization and composing different concepts)",
		Rows: []PaperRow{
			{"length", "transformer", "26.9 ± 0.7", "28.7 ± 1.7"},
			{"compose-different-concepts", "transformer", "10.5 ± 2.4", "56.5 ± 6.4"},
			{"length", "transformer-sep", "26.7 ± 0.6", "32.6 ± 2.2"},
			{"compose-different-concepts", "transformer-sep", "37.3 ± 2.8", "89.3 ± 1.7"},
			{"length", "relative", "46.1 ± 3.0", "65.3 ± 1.1"},
			{"compose-different-concepts", "relative", "29.2 ± 4.6", "53.0 ± 3.8"},
			{"length", "relative-sep", "42.1 ± 3.5", "74.5 ± 6.9"},
			{"compose-different-concepts", "relative-sep", "46.7 ± 4.3", "76.4 ± 6.3"},
			{"length", "sep-full", "50.2 ± 2.0", "72.3 ± 2.8"},
			{"compose-different-concepts", "sep-full", "36.7 ± 2.4", "71.2 ± 9.3"},
			{"length", "sep-to-sep-and-last", "47.2 ± 2.5", "75.0 ± 2.3"},
			{"compose-different-concepts", "sep-to-sep-and-last", "49.0 ± 6.6", "72.3 ± 8.8"},
			{"length", "sep-to-last", "41.9 ± 3.3", "70.8 ± 4.5"},
			{"compose-different-concepts", "sep-to-last", "74.4 ± 9.3", "84.9 ± 5.2"},
		},
	},
	"keysers-table4": {
		Name:   "keysers-table4",
		Source: "Keysers et al. (2020), Table 4, SCAN: test accuracy as printed there; MCD is the mean over MCD1-3",
		Rows: []PaperRow{
			{"random", "lstm-attention", "99.9 ± 2.7", ""},
			{"mcd*", "lstm-attention", "6.1 ± 2.2", ""},
			{"random", "transformer", "100.0 ± 0.0", ""},
			{"mcd*", "transformer", "1.1 ± 0.5", ""},
			{"random", "universal", "99.9 ± 0.2", ""},
			{"mcd*", "universal", "1.2 ± 0.7", ""},
		},
	},
}

// PaperNames lists the --paper values.
func PaperNames() []string {
	names := make([]string, 0, len(Papers))
	for n := range Papers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetPaper shows the named paper's numbers beside the groups they match.
func (r *Report) SetPaper(name string) error {
	p, ok := Papers[name]
	if !ok {
		return fmt.Errorf("unknown paper %q (want one of %s)", name, strings.Join(PaperNames(), ", "))
	}
	r.paper = &p
	r.pool()
	return nil
}

// pool adds, for each published row whose data is a pattern (mcd*), one
// row per model and family of datasets over every run of the groups the
// pattern matches, when it matches more than one: the paper's MCD number is
// the mean over its MCD splits, so ours is the mean over all MCD runs
// (splits and seeds). A family is what a data name puts before its last
// "-" (ours-mcd1..3, published-mcd1), so two families of splits in one
// report are pooled apart.
func (r *Report) pool() {
	n := len(r.Groups)
	for _, row := range r.paper.Rows {
		if !strings.HasSuffix(row.Data, "*") {
			continue
		}
		pooled := map[string]*Group{}
		datasets := map[string]map[string]bool{}
		var order []string
		for gi := 0; gi < n; gi++ {
			g := &r.Groups[gi]
			if variantOf(g) != row.Model || !matchData(row.Data, g.Cell.Data) || len(g.Cell.Vary) > 0 {
				continue
			}
			fam, _ := family(g.Cell.Data)
			p := pooled[fam]
			if p == nil {
				p = &Group{Cell: g.Cell, Pooled: true}
				p.Cell.Data = fam + row.Data
				pooled[fam], datasets[fam] = p, map[string]bool{}
				order = append(order, fam)
			}
			datasets[fam][g.Cell.Data] = true
			p.Runs = append(p.Runs, g.Runs...)
		}
		for _, fam := range order {
			if len(datasets[fam]) > 1 {
				r.summarise(pooled[fam])
				r.Groups = append(r.Groups, *pooled[fam])
			}
		}
	}
}

// family splits a data name at its last "-": "ours-" and "mcd1" for
// ours-mcd1, "" and the name when there is none.
func family(name string) (prefix, rest string) {
	if i := strings.LastIndex(name, "-"); i >= 0 {
		return name[:i+1], name[i+1:]
	}
	return "", name
}

// matchData reports whether a published row's data matches a cell's data
// name: exactly, or, for a pattern ending in "*" (mcd*), when the name or
// the part after its family prefix starts with the rest (mcd1,
// published-mcd1, ours-mcd2).
func matchData(pattern, name string) bool {
	prefix, ok := strings.CutSuffix(pattern, "*")
	if !ok {
		return pattern == name
	}
	_, rest := family(name)
	return strings.HasPrefix(name, prefix) || strings.HasPrefix(rest, prefix)
}

func variantOf(g *Group) string {
	if g.Cell.Variant != "" {
		return g.Cell.Variant
	}
	return g.Cell.Model
}

// published is the paper's row for a group, if any.
func (r *Report) published(g *Group) (PaperRow, bool) {
	if r.paper == nil {
		return PaperRow{}, false
	}
	for _, row := range r.paper.Rows {
		if row.Model == variantOf(g) && matchData(row.Data, g.Cell.Data) {
			return row, true
		}
	}
	return PaperRow{}, false
}

// paperColumns are the published columns some group has.
func (r *Report) paperColumns() (zero, few bool) {
	for gi := range r.Groups {
		if row, ok := r.published(&r.Groups[gi]); ok {
			zero = zero || row.ZeroShot != ""
			few = few || row.FewShot != ""
		}
	}
	return zero, few
}
