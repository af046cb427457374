package scan

import (
	"testing"

	"compbench/data"
)

// treeSize counts the nodes a derivation must have: per part D := P, P, Q,
// then a for bare actions, or l/r, v and (unless turn) a; per "and" one
// node; per "after" two (C := C after C and the next group's C := D); plus
// the first group's C := D.
func treeSize(c *Command) int {
	n := 1
	for _, p := range c.Parts {
		switch {
		case p.Form == Bare:
			n += 4
		case p.Verb == Turn:
			n += 5
		default:
			n += 6
		}
	}
	for _, cj := range c.Conjs {
		n++
		if cj == After {
			n++
		}
	}
	return n
}

func TestTree(t *testing.T) {
	tests := []struct {
		name, cmd, want string
	}{
		{"bare", "jump", "C := D(D := P(P := Q(Q := a(a := jump))))"},
		{"turn", "turn opposite right thrice",
			"C := D(D := P(P := Q thrice(Q := r(r := v opposite right(v := turn)))))"},
		{"and and after", "jump left twice and walk after turn right",
			"C := C after C(C := D(D := D and D(D := P(P := Q twice(Q := l(l := v left(v := a(a := jump))))), " +
				"D := P(P := Q(Q := a(a := walk))))), C := D(D := P(P := Q(Q := r(r := v right(v := turn))))))"},
		{"and is left-associative", "walk and look and run",
			"C := D(D := D and D(D := D and D(D := P(P := Q(Q := a(a := walk))), D := P(P := Q(Q := a(a := look)))), " +
				"D := P(P := Q(Q := a(a := run)))))"},
		{"after is left-associative", "walk after look after run around left",
			"C := C after C(C := C after C(C := D(D := P(P := Q(Q := a(a := walk)))), C := D(D := P(P := Q(Q := a(a := look))))), " +
				"C := D(D := P(P := Q(Q := l(l := v around left(v := a(a := run)))))))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := MustParse(tc.cmd)
			tr := c.Tree()
			if got := tr.String(); got != tc.want {
				t.Errorf("Tree(%q) =\n%s\nwant\n%s", tc.cmd, got, tc.want)
			}
			if got, want := tr.Size(), treeSize(&c); got != want {
				t.Errorf("size %d, want %d", got, want)
			}
		})
	}
}

func TestTreeLabelsAreRules(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Rules {
		known[r] = true
	}
	if len(known) != 22 {
		t.Fatalf("%d distinct rules, want 22 (Fig. 2)", len(known))
	}
	seen := map[string]bool{}
	rng := data.NewRand(1)
	for i := 0; i < 2000; i++ {
		specs := make([]PartSpec, 1+i%10)
		c := Sample(rng, specs)
		c.Tree().Walk(func(n *data.Tree) {
			if !known[n.Label] {
				t.Fatalf("unknown label %q in %q", n.Label, c.Text())
			}
			seen[n.Label] = true
		})
	}
	for _, r := range Rules {
		if !seen[r] {
			t.Errorf("rule %q never used in 2000 samples", r)
		}
	}
}
