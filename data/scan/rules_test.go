package scan

import (
	"slices"
	"strings"
	"testing"

	"compbench/data"
)

// TestOriginalRules checks the 38 atoms of Keysers et al. §5.3: 18 grammar
// and 20 interpretation rules, all distinct, every one used by some command
// of tasks.txt's pool, and no tree holding any other label.
func TestOriginalRules(t *testing.T) {
	if len(OriginalRules) != 38 {
		t.Fatalf("%d rules, want 38: %v", len(OriginalRules), OriginalRules)
	}
	grammar, interp := 0, 0
	for _, r := range OriginalRules {
		if strings.HasPrefix(r, "[[") {
			interp++
		} else {
			grammar++
		}
	}
	if grammar != 18 || interp != 20 {
		t.Errorf("%d grammar and %d interpretation rules, want 18 and 20", grammar, interp)
	}
	used := map[string]int{}
	var walk func(*data.Tree)
	walk = func(n *data.Tree) {
		used[n.Label]++
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, c := range OriginalCommands() {
		tr, err := c.RuleTree()
		if err != nil {
			t.Fatalf("%s: %v", c.Text(), err)
		}
		walk(tr)
	}
	for _, r := range OriginalRules {
		if used[r] == 0 {
			t.Errorf("rule %q never used", r)
		}
		delete(used, r)
	}
	if len(used) > 0 {
		t.Errorf("labels outside the 38 rules: %v", used)
	}
}

// TestRuleTree checks the rule-application trees of hand-worked commands.
func TestRuleTree(t *testing.T) {
	for _, tc := range []struct{ cmd, tree string }{
		{"jump", "C := S(S := V(V := U(U := jump([[jump]]))))"},
		{"turn left", "C := S(S := V(V := D(D := turn left([[turn left]]))))"},
		// Inside "opposite" the D has no meaning of its own.
		{"turn opposite right", "C := S(S := V(V := D opposite D([[turn opposite right]](D := turn right))))"},
		{"look around left thrice",
			"C := S(S := V thrice([[x thrice]](V := D around D([[u around left]](D := U left(U := look([[look]])))))))"},
		{"jump twice and walk left",
			"C := S and S([[x1 and x2]](S := V twice([[x twice]](V := U(U := jump([[jump]])))), " +
				"S := V(V := D(D := U left([[u left]](U := walk([[walk]])))))))"},
		{"run opposite left after turn right",
			"C := S after S([[x1 after x2]](S := V(V := D opposite D([[u opposite left]](D := U left(U := run([[run]]))))), " +
				"S := V(V := D(D := turn right([[turn right]])))))"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			c, err := Parse(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := c.RuleTree()
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.tree {
				t.Errorf("tree\n %s\nwant\n %s", got, tc.tree)
			}
			if rec := c.TextRecord(); rec.Tree.String() != tc.tree {
				t.Errorf("TextRecord tree %s", rec.Tree)
			}
		})
	}
}

// TestRuleTreeExtended checks that a command beyond the original grammar is
// refused by RuleTree and keeps Shi et al.'s derivation in TextRecord.
func TestRuleTreeExtended(t *testing.T) {
	c, err := Parse("walk and jump and look")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RuleTree(); err == nil || !strings.Contains(err.Error(), "original SCAN grammar") {
		t.Errorf("error %v, want one naming the original grammar", err)
	}
	if rec := c.TextRecord(); rec.Tree.String() != c.Tree().String() {
		t.Errorf("TextRecord tree %s, want Shi et al.'s %s", rec.Tree, c.Tree())
	}
	if !slices.Contains(OriginalRules, InterpAfter) {
		t.Error("rules lack [[x1 after x2]]")
	}
}
