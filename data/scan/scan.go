// Package scan implements the extended SCAN domain of Shi et al.,
// "Compositional Generalization and Decomposition in Neural Program
// Synthesis", App. A (Fig. 2): commands with any number of "and" and "after"
// conjunctions, their translation to action sequences, their derivation
// trees, program parts (§3), a random sampler, and the original SCAN text
// format of Lake & Baroni (2018).
//
// Grammar (Fig. 2):
//
//	C := C "after" C | D          D := D "and" D | P
//	P := Q | Q "twice" | Q "thrice"
//	Q := l | r | a
//	l := v "left" | v "opposite left" | v "around left"   (r likewise)
//	v := "turn" | a               a := "walk" | "look" | "run" | "jump"
//
// "and" binds tighter than "after" (§3, footnote 2) and "X after Y" runs Y
// first.
package scan

// Verb is the word that starts a phrase: one of the four actions or "turn".
type Verb uint8

// The verbs; Turn is only valid before a direction (v := "turn").
const (
	Walk Verb = iota
	Look
	Run
	Jump
	Turn
)

// Actions are the verbs that may stand alone (a := walk | look | run | jump).
var Actions = []Verb{Walk, Look, Run, Jump}

// Verbs are the verbs that may precede a direction (v := turn | a).
var Verbs = []Verb{Walk, Look, Run, Jump, Turn}

var verbWords = [...]string{"walk", "look", "run", "jump", "turn"}

// verbActions are the output action names (Fig. 2); Turn has none.
var verbActions = [...]string{"WALK", "LOOK", "RUN", "JUMP", ""}

func (v Verb) String() string {
	if int(v) < len(verbWords) {
		return verbWords[v]
	}
	return "verb?"
}

// Dir is a phrase's direction; NoDir for a bare action.
type Dir uint8

// The directions.
const (
	NoDir Dir = iota
	Left
	Right
)

// Dirs are the two directions a phrase may take.
var Dirs = []Dir{Left, Right}

var dirWords = [...]string{"", "left", "right"}

// dirTurns are the output turn actions (Fig. 2).
var dirTurns = [...]string{"", "LTURN", "RTURN"}

func (d Dir) String() string {
	if int(d) < len(dirWords) {
		return dirWords[d]
	}
	return "dir?"
}

// Form is the shape of a phrase Q: one of the four templates of the sampler.
type Form uint8

// The forms: Bare is "a", Plain "v dir", Opposite "v opposite dir", Around
// "v around dir".
const (
	Bare Form = iota
	Plain
	Opposite
	Around
)

// Forms are all four forms, in the sampler's template order.
var Forms = []Form{Bare, Plain, Opposite, Around}

// DirForms are the forms that carry a direction (the concept tasks use only
// these, App. B).
var DirForms = []Form{Plain, Opposite, Around}

// Part is one phrase P of a command: a program part (§3).
type Part struct {
	// Verb is the action, or Turn (only with a direction).
	Verb Verb
	// Form is the phrase template.
	Form Form
	// Dir is the direction; NoDir exactly when Form is Bare.
	Dir Dir
	// Times is 1, 2 ("twice") or 3 ("thrice").
	Times int
}

// Conj joins two parts of a command.
type Conj uint8

// The conjunctions.
const (
	And Conj = iota
	After
)

func (c Conj) String() string {
	if c == After {
		return "after"
	}
	return "and"
}

// Command is a parsed SCAN command: parts in command (input) order and the
// conjunctions between them.
type Command struct {
	// Parts are the phrases P in the order they are written.
	Parts []Part
	// Conjs[i] joins Parts[i] and Parts[i+1]; len(Conjs) == len(Parts)-1.
	Conjs []Conj
}

// Valid reports whether p is a phrase of the grammar.
func (p Part) Valid() bool {
	if p.Verb > Turn || p.Form > Around || p.Dir > Right || p.Times < 1 || p.Times > 3 {
		return false
	}
	if p.Form == Bare {
		return p.Dir == NoDir && p.Verb != Turn
	}
	return p.Dir != NoDir
}

// IsBareJump reports whether c is exactly the command "jump".
func (c *Command) IsBareJump() bool {
	return len(c.Parts) == 1 && c.Parts[0] == Part{Verb: Jump, Form: Bare, Times: 1}
}

// HasVerb reports whether some part uses verb v.
func (c *Command) HasVerb(v Verb) bool {
	for _, p := range c.Parts {
		if p.Verb == v {
			return true
		}
	}
	return false
}

// HasPhrase reports whether some part has form f and direction d (Around,
// Right: the command contains "around right").
func (c *Command) HasPhrase(f Form, d Dir) bool {
	for _, p := range c.Parts {
		if p.Form == f && p.Dir == d {
			return true
		}
	}
	return false
}

// HasDir reports whether some part has direction d.
func (c *Command) HasDir(d Dir) bool {
	for _, p := range c.Parts {
		if p.Dir == d {
			return true
		}
	}
	return false
}

// OutputOrder returns the command positions of the parts in the order their
// actions appear in the output: the "after"-separated groups reversed, each
// group kept in order ("and" binds tighter, and "X after Y" runs Y first).
// Reversal does not depend on how "after" chains associate.
func (c *Command) OutputOrder() []int {
	return outputOrder(c.Conjs, make([]int, 0, len(c.Conjs)+1))
}

// outputOrder appends the output order for a command with these conjunctions.
func outputOrder(conjs []Conj, dst []int) []int {
	n := len(conjs) + 1
	end := n
	for i := n - 1; i >= 0; i-- {
		if i == 0 || conjs[i-1] == After {
			for j := i; j < end; j++ {
				dst = append(dst, j)
			}
			end = i
		}
	}
	return dst
}
