package scan

import (
	"strings"
	"testing"
)

// rep repeats a space-separated sequence n times.
func rep(s string, n int) string {
	return strings.TrimSpace(strings.Repeat(s+" ", n))
}

func TestTranslate(t *testing.T) {
	tests := []struct {
		name, cmd, out string
	}{
		{"walk", "walk", "WALK"},
		{"look", "look", "LOOK"},
		{"run", "run", "RUN"},
		{"jump", "jump", "JUMP"},
		{"turn left", "turn left", "LTURN"},
		{"turn right", "turn right", "RTURN"},
		{"action left", "jump left", "LTURN JUMP"},
		{"action right", "walk right", "RTURN WALK"},
		{"turn opposite left", "turn opposite left", "LTURN LTURN"},
		{"turn opposite right", "turn opposite right", "RTURN RTURN"},
		{"action opposite left", "run opposite left", "LTURN LTURN RUN"},
		{"action opposite right", "look opposite right", "RTURN RTURN LOOK"},
		{"turn around left", "turn around left", "LTURN LTURN LTURN LTURN"},
		{"turn around right", "turn around right", "RTURN RTURN RTURN RTURN"},
		{"action around left", "jump around left", rep("LTURN JUMP", 4)},
		{"action around right", "walk around right", rep("RTURN WALK", 4)},
		{"twice", "jump twice", "JUMP JUMP"},
		{"thrice", "look thrice", "LOOK LOOK LOOK"},
		{"turn left thrice", "turn left thrice", "LTURN LTURN LTURN"},
		{"opposite twice", "run opposite right twice", "RTURN RTURN RUN RTURN RTURN RUN"},
		{"around thrice", "jump around right thrice", rep("RTURN JUMP", 12)},
		{"turn around twice", "turn around left twice", rep("LTURN", 8)},
		{"and", "walk and run", "WALK RUN"},
		{"after", "walk after run", "RUN WALK"},
		{"after chain", "walk after run after look", "LOOK RUN WALK"},
		{"and chain", "walk and run and look left", "WALK RUN LTURN LOOK"},
		{"and binds tighter", "jump and run after walk", "WALK JUMP RUN"},
		{"issue check", "jump left twice and run right after walk thrice",
			"WALK WALK WALK LTURN JUMP LTURN JUMP RTURN RUN"},
		{"reference check", "jump and walk and run twice after turn left and look after jump thrice",
			"JUMP JUMP JUMP LTURN LOOK JUMP WALK RUN RUN"},
		{"paper §1 example", "jump left twice and walk", "LTURN JUMP LTURN JUMP WALK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.cmd)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.cmd, err)
			}
			if got := c.Output(); got != tc.out {
				t.Errorf("Output(%q) = %q, want %q", tc.cmd, got, tc.out)
			}
			if got := c.Text(); got != tc.cmd {
				t.Errorf("Text() = %q, want %q", got, tc.cmd)
			}
			if got, want := c.OutputLen(), len(strings.Fields(tc.out)); got != want {
				t.Errorf("OutputLen() = %d, want %d", got, want)
			}
			if got := strings.Join(c.OutputParts(), " "); got != tc.out {
				t.Errorf("parts joined = %q, want the output %q", got, tc.out)
			}
			if got, want := len(c.OutputParts()), len(c.Parts); got != want {
				t.Errorf("%d parts, want %d", got, want)
			}
		})
	}
}

func TestOutputParts(t *testing.T) {
	tests := []struct {
		name, cmd string
		parts     []string
	}{
		{"one", "turn around left", []string{"LTURN LTURN LTURN LTURN"}},
		{"paper §3", "jump left twice and walk", []string{"LTURN JUMP LTURN JUMP", "WALK"}},
		{"after reorders", "jump and walk after run", []string{"RUN", "JUMP", "WALK"}},
		{"two afters", "jump after walk twice and look after run left",
			[]string{"LTURN RUN", "WALK WALK", "LOOK", "JUMP"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := MustParse(tc.cmd)
			got := c.OutputParts()
			if strings.Join(got, "|") != strings.Join(tc.parts, "|") {
				t.Errorf("OutputParts(%q) = %q, want %q", tc.cmd, got, tc.parts)
			}
		})
	}
}

func TestOutputOrder(t *testing.T) {
	tests := []struct {
		name  string
		conjs []Conj
		want  []int
	}{
		{"single", nil, []int{0}},
		{"and", []Conj{And, And}, []int{0, 1, 2}},
		{"after", []Conj{After, After}, []int{2, 1, 0}},
		{"mixed", []Conj{And, After, And, After}, []int{4, 2, 3, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Command{Conjs: tc.conjs}
			got := c.OutputOrder()
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, cmd, want string
	}{
		{"empty", "  ", "empty command"},
		{"bare turn", "turn", "want a direction"},
		{"turn twice", "turn twice", `word 2 "twice"`},
		{"unknown verb", "fly left", `word 1 "fly"`},
		{"two directions", "jump left right", `word 3 "right"`},
		{"trailing conjunction", "jump and", `ends after "and"`},
		{"leading conjunction", "and jump", `word 1 "and"`},
		{"opposite without direction", "jump opposite", `ends after "opposite"`},
		{"around then twice", "jump around twice", `word 3 "twice": want left or right`},
		{"twice twice", "jump twice twice", `word 3 "twice"`},
		{"double conjunction", "jump and and walk", `word 3 "and"`},
		{"upper case", "Jump", `word 1 "Jump"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.cmd)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.cmd)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error %q does not contain %q", tc.cmd, err, tc.want)
			}
		})
	}
}

func TestPartTableCoversValidParts(t *testing.T) {
	valid := 0
	for v := Walk; v <= Turn; v++ {
		for f := Bare; f <= Around; f++ {
			for d := NoDir; d <= Right; d++ {
				for times := 1; times <= 3; times++ {
					p := Part{Verb: v, Form: f, Dir: d, Times: times}
					if !p.Valid() {
						continue
					}
					valid++
					c, err := Parse(p.Words())
					if err != nil || len(c.Parts) != 1 || c.Parts[0] != p {
						t.Errorf("%+v: words %q parse to %+v, %v", p, p.Words(), c.Parts, err)
					}
					if p.Actions() == "" || p.Len() != len(strings.Fields(p.Actions())) {
						t.Errorf("%+v: actions %q, len %d", p, p.Actions(), p.Len())
					}
				}
			}
		}
	}
	// 4 bare actions, 5 verbs x 3 forms x 2 directions, each x 3 repeats.
	if want := (4 + 5*3*2) * 3; valid != want {
		t.Errorf("%d valid parts, want %d", valid, want)
	}
}

func TestPredicates(t *testing.T) {
	tests := []struct {
		cmd                           string
		bareJump, jump, aroundR, left bool
	}{
		{"jump", true, true, false, false},
		{"jump twice", false, true, false, false},
		{"walk around right and jump left", false, true, true, true},
		{"walk around left after turn opposite right", false, false, false, true},
		{"run right", false, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			c := MustParse(tc.cmd)
			if got := c.IsBareJump(); got != tc.bareJump {
				t.Errorf("IsBareJump = %v", got)
			}
			if got := c.HasVerb(Jump); got != tc.jump {
				t.Errorf("HasVerb(Jump) = %v", got)
			}
			if got := c.HasPhrase(Around, Right); got != tc.aroundR {
				t.Errorf("HasPhrase(Around, Right) = %v", got)
			}
			if got := c.HasDir(Left); got != tc.left {
				t.Errorf("HasDir(Left) = %v", got)
			}
			// The predicates agree with the substring tests of the
			// published generator.
			if got := strings.Contains(tc.cmd, "around right"); got != tc.aroundR {
				t.Errorf("substring test says %v", got)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"jump", "turn left twice and walk after run around right thrice",
		"jump and", "turn", "walk  left", "jump opposite left after look"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		c2, err := Parse(c.Text())
		if err != nil || c2.Text() != c.Text() {
			t.Fatalf("Text %q does not parse back: %v", c.Text(), err)
		}
		if got, want := c.Tree().Size(), treeSize(&c); got != want {
			t.Fatalf("tree of %q has %d nodes, want %d", s, got, want)
		}
		if strings.Join(c.OutputParts(), " ") != c.Output() {
			t.Fatalf("parts of %q do not join to the output", s)
		}
	})
}

func TestInvalidPartsDoNotPanic(t *testing.T) {
	for _, p := range []Part{{}, {Verb: Turn, Form: Bare, Times: 1}, {Verb: 9, Form: Plain, Dir: Left, Times: 1}, {Verb: Walk, Form: Plain, Times: 1}} {
		if p.Valid() || p.Words() != "" || p.Actions() != "" || p.Len() != 0 {
			t.Errorf("%+v: valid %v, words %q, actions %q", p, p.Valid(), p.Words(), p.Actions())
		}
		c := Command{Parts: []Part{p}}
		if c.Tree() == nil {
			t.Errorf("%+v: nil tree", p)
		}
	}
}
