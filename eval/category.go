package eval

import (
	"fmt"
	"sort"
)

// GroupScore is exact match over the examples of one category or group.
type GroupScore struct {
	// Name is the category (a gold record's "category") or the group.
	Name string `json:"name"`
	// N is the number of gold records in it.
	N int `json:"n"`
	// Correct is how many of them were correct.
	Correct int `json:"correct"`
	// Accuracy is Correct / N.
	Accuracy float64 `json:"accuracy"`
}

// Breakdown is exact match by the gold records' categories and, when they
// are COGS's cases, by COGS's groups of cases.
type Breakdown struct {
	// Categories holds one entry per category, in name order.
	Categories []GroupScore `json:"categories"`
	// Groups holds COGS's lexical and structural groups (Kim & Linzen 2020
	// report results "in aggregate, lexical against structural"), their
	// union, generalization (the 21 cases: the aggregate of gen.tsv, also
	// when in-distribution records share the file), then in_distribution
	// and other (categories that are no COGS case) when present. It is
	// empty unless some category is a COGS generalization case.
	Groups []GroupScore `json:"groups,omitempty"`
}

// COGS's generalization cases (Kim & Linzen 2020 §3, the case names of
// gen.tsv's third column), by group: structural generalization (§3.2, §3.3)
// and lexical generalization (§3.1, §3.4, §3.5).
var (
	cogsStructural = []string{"cp_recursion", "obj_pp_to_subj_pp", "pp_recursion"}
	cogsLexical    = []string{
		"active_to_passive", "do_dative_to_pp_dative", "obj_omitted_transitive_to_transitive",
		"obj_to_subj_common", "obj_to_subj_proper", "only_seen_as_transitive_subj_as_unacc_subj",
		"only_seen_as_unacc_subj_as_obj_omitted_transitive_subj", "only_seen_as_unacc_subj_as_unerg_subj",
		"passive_to_active", "pp_dative_to_do_dative", "prim_to_inf_arg", "prim_to_obj_common",
		"prim_to_obj_proper", "prim_to_subj_common", "prim_to_subj_proper", "subj_to_obj_common",
		"subj_to_obj_proper", "unacc_to_transitive",
	}
	cogsGroupOf = func() map[string]string {
		m := map[string]string{COGSInDistribution: COGSInDistribution}
		for _, c := range cogsStructural {
			m[c] = COGSStructural
		}
		for _, c := range cogsLexical {
			m[c] = COGSLexical
		}
		return m
	}()
)

// COGS's group names, in the order Breakdown lists them.
const (
	COGSLexical        = "lexical"
	COGSStructural     = "structural"
	COGSGeneralization = "generalization"
	COGSInDistribution = "in_distribution"
	GroupOther         = "other"
)

// COGSGroup names the group of a COGS case: lexical, structural, or
// in_distribution; "" for a category that is none of COGS's.
func COGSGroup(category string) string { return cogsGroupOf[category] }

// ByCategory breaks exact match down by the category of each example's gold
// record; exs are Score's judgements of j, in j's order. Every gold record
// must have a category.
func ByCategory(j *Joined, exs []Example) (*Breakdown, error) {
	if len(exs) != len(j.Pairs) {
		return nil, fmt.Errorf("by category: %d judgements for %d gold records", len(exs), len(j.Pairs))
	}
	cats := map[string]*GroupScore{}
	groups := map[string]*GroupScore{}
	cogs := false
	add := func(m map[string]*GroupScore, name string, ok bool) {
		g := m[name]
		if g == nil {
			g = &GroupScore{Name: name}
			m[name] = g
		}
		g.N++
		if ok {
			g.Correct++
		}
	}
	for i, p := range j.Pairs {
		c := p.Gold.Category
		if c == "" {
			return nil, fmt.Errorf("gold record %d (id %q) has no category (a .tsv file's third column, or \"category\" in JSONL)", i+1, p.Gold.ID)
		}
		add(cats, c, exs[i].Correct)
		g := COGSGroup(c)
		if g == COGSLexical || g == COGSStructural {
			cogs = true
			add(groups, COGSGeneralization, exs[i].Correct)
		}
		if g == "" {
			g = GroupOther
		}
		add(groups, g, exs[i].Correct)
	}
	b := &Breakdown{}
	for _, g := range cats {
		b.Categories = append(b.Categories, finish(g))
	}
	sort.Slice(b.Categories, func(x, y int) bool { return b.Categories[x].Name < b.Categories[y].Name })
	if cogs {
		for _, name := range []string{COGSLexical, COGSStructural, COGSGeneralization, COGSInDistribution, GroupOther} {
			if g := groups[name]; g != nil {
				b.Groups = append(b.Groups, finish(g))
			}
		}
	}
	return b, nil
}

func finish(g *GroupScore) GroupScore {
	if g.N > 0 {
		g.Accuracy = float64(g.Correct) / float64(g.N)
	}
	return *g
}
