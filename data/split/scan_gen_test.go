package split

import (
	"fmt"
	"strings"

	"compbench/data"
)

// scanNode is a phrase of the original SCAN grammar (Lake & Baroni) with its
// rule-application tree and its action sequence.
type scanNode struct {
	words, actions []string
	tree           *data.Tree
}

func node(rule string, words, actions []string, kids ...*scanNode) *scanNode {
	t := &data.Tree{Label: rule}
	for _, k := range kids {
		t.Children = append(t.Children, k.tree)
	}
	return &scanNode{words: words, actions: actions, tree: t}
}

func cat(ss ...[]string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s...)
	}
	return out
}

func rep(s []string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, s...)
	}
	return out
}

// allSCAN enumerates every SCAN command (20,910) in a fixed order, with rule
// trees as Keysers et al. §5.3 track them: one node per rule application.
func allSCAN() []data.Record {
	var us []*scanNode
	for _, w := range []string{"walk", "look", "run", "jump"} {
		us = append(us, node("U -> "+w, []string{w}, []string{"I_" + strings.ToUpper(w)}))
	}
	turn := map[string]string{"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
	var ds []*scanNode
	for _, dir := range []string{"left", "right"} {
		for _, u := range us {
			ds = append(ds, node("D -> U "+dir, cat(u.words, []string{dir}), cat([]string{turn[dir]}, u.actions), u))
		}
		ds = append(ds, node("D -> turn "+dir, []string{"turn", dir}, []string{turn[dir]}))
	}
	var vs []*scanNode
	for _, d := range ds {
		// D[1] opposite D[2]: the direction turned twice, then the action.
		act := d.actions[1:]
		tr := d.actions[:1]
		if len(d.actions) == 1 {
			act = nil
		}
		vs = append(vs, node("V -> D opposite", cat(d.words[:len(d.words)-1], []string{"opposite"}, d.words[len(d.words)-1:]),
			cat(tr, tr, act), d))
		vs = append(vs, node("V -> D around", cat(d.words[:len(d.words)-1], []string{"around"}, d.words[len(d.words)-1:]),
			rep(cat(tr, act), 4), d))
		vs = append(vs, node("V -> D", d.words, d.actions, d))
	}
	for _, u := range us {
		vs = append(vs, node("V -> U", u.words, u.actions, u))
	}
	var ss []*scanNode
	for _, v := range vs {
		ss = append(ss, node("S -> V", v.words, v.actions, v))
		ss = append(ss, node("S -> V twice", cat(v.words, []string{"twice"}), rep(v.actions, 2), v))
		ss = append(ss, node("S -> V thrice", cat(v.words, []string{"thrice"}), rep(v.actions, 3), v))
	}
	var cs []*scanNode
	for _, a := range ss {
		cs = append(cs, node("C -> S", a.words, a.actions, a))
		for _, b := range ss {
			cs = append(cs, node("C -> S and S", cat(a.words, []string{"and"}, b.words), cat(a.actions, b.actions), a, b))
			cs = append(cs, node("C -> S after S", cat(a.words, []string{"after"}, b.words), cat(b.actions, a.actions), a, b))
		}
	}
	recs := make([]data.Record, len(cs))
	for i, c := range cs {
		recs[i] = data.Record{ID: fmt.Sprintf("scan-%d", i), Input: strings.Join(c.words, " "),
			Output: strings.Join(c.actions, " "), Tree: c.tree}
	}
	return recs
}

// scanSample returns n SCAN commands chosen by seed, in pool order.
func scanSample(n int, seed uint64) []data.Record {
	all := allSCAN()
	perm := data.NewRand(seed).Perm(len(all))[:n]
	out := make([]data.Record, n)
	for i, j := range perm {
		out[i] = all[j]
	}
	return out
}
