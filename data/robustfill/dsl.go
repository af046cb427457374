// Package robustfill implements the string-transformation DSL of Shi et al.,
// "Compositional Generalization and Decomposition in Neural Program
// Synthesis", App. A, Fig. 3 (RobustFill, extended): programs, their JSON
// and token encodings, an interpreter with the semantics fixed in
// docs/robustfill.md, and a random task sampler (4 I/O examples per task).
package robustfill

//lint:file-ignore ST1005 error messages start with the DSL operator they concern (Compose, SubStr, ...), whose names are capitalized

import "fmt"

// Op names an operation of the DSL.
type Op uint8

// The operations of Fig. 3. Substring operations come first, then the
// modifications, then Compose and ConstStr.
const (
	OpInvalid Op = iota
	SubStr
	GetSpan
	GetToken
	GetUpto
	GetFrom
	ToCase
	Replace
	Trim
	GetFirst
	GetAll
	Substitute
	SubstituteAll
	Remove
	RemoveAll
	Compose
	ConstStr
	numOps
)

var opNames = [numOps]string{"", "SubStr", "GetSpan", "GetToken", "GetUpto", "GetFrom",
	"ToCase", "Replace", "Trim", "GetFirst", "GetAll", "Substitute", "SubstituteAll",
	"Remove", "RemoveAll", "Compose", "ConstStr"}

func (o Op) String() string {
	if o < numOps && o != OpInvalid {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// IsSubstring reports whether o extracts a substring of its input.
func (o Op) IsSubstring() bool { return o >= SubStr && o <= GetFrom }

// IsModification reports whether o returns a modified version of its input.
func (o Op) IsModification() bool { return o >= ToCase && o <= RemoveAll }

func parseOp(s string) (Op, bool) {
	for o := SubStr; o < numOps; o++ {
		if opNames[o] == s {
			return o, true
		}
	}
	return OpInvalid, false
}

// Type is a regex type of Fig. 3.
type Type uint8

// The regex types. Number..Lower match maximal runs (the regexes are greedy
// and matches leftmost, non-overlapping); Digit and Char match one character.
const (
	TypeInvalid Type = iota
	Number           // [0-9]+
	Word             // [A-Za-z]+
	Alphanum         // [A-Za-z0-9]+
	AllCaps          // [A-Z]+
	PropCase         // [A-Z][a-z]+
	Lower            // [a-z]+
	Digit            // [0-9]
	Char             // one letter, digit or delimiter
	numTypes
)

var typeNames = [numTypes]string{"", "NUMBER", "WORD", "ALPHANUM", "ALL_CAPS",
	"PROP_CASE", "LOWER", "DIGIT", "CHAR"}

func (t Type) String() string {
	if t < numTypes && t != TypeInvalid {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

func parseType(s string) (Type, bool) {
	for t := Number; t < numTypes; t++ {
		if typeNames[t] == s {
			return t, true
		}
	}
	return TypeInvalid, false
}

// Case is the argument of ToCase.
type Case uint8

// The cases of Fig. 3.
const (
	CaseInvalid Case = iota
	Proper
	AllCapsCase
	LowerCase
	numCases
)

var caseNames = [numCases]string{"", "PROPER", "ALL_CAPS", "LOWER"}

func (c Case) String() string {
	if c < numCases && c != CaseInvalid {
		return caseNames[c]
	}
	return fmt.Sprintf("Case(%d)", uint8(c))
}

func parseCase(s string) (Case, bool) {
	for c := Proper; c < numCases; c++ {
		if caseNames[c] == s {
			return c, true
		}
	}
	return CaseInvalid, false
}

// Boundary picks the start or end offset of a match in GetSpan.
type Boundary uint8

// The boundaries of Fig. 3.
const (
	BoundaryInvalid Boundary = iota
	Start
	End
)

func (b Boundary) String() string {
	switch b {
	case Start:
		return "START"
	case End:
		return "END"
	}
	return fmt.Sprintf("Boundary(%d)", uint8(b))
}

func parseBoundary(s string) (Boundary, bool) {
	switch s {
	case "START":
		return Start, true
	case "END":
		return End, true
	}
	return BoundaryInvalid, false
}

// Delimiters are the delimiter characters of Fig. 3 (space included).
const Delimiters = "&,.?!@()[]%{}/:;$#\"' "

// Characters are the characters a ConstStr or Substitute may produce.
const Characters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + Delimiters

// Value ranges of Fig. 3 (zero excluded from both).
const (
	MaxPosition = 100
	MaxIndex    = 5
)

var (
	isDelim = byteSet(Delimiters)
	isChar  = byteSet(Characters)
)

func byteSet(s string) (set [256]bool) {
	for i := 0; i < len(s); i++ {
		set[s[i]] = true
	}
	return set
}

// IsDelimiter reports whether c is a delimiter of Fig. 3.
func IsDelimiter(c byte) bool { return isDelim[c] }

// IsCharacter reports whether c may be a ConstStr or Substitute character.
func IsCharacter(c byte) bool { return isChar[c] }

// Regex is a regex argument: a type, or (when Type is TypeInvalid) the
// single delimiter character Delim.
type Regex struct {
	// Type is the regex type, or TypeInvalid for a delimiter.
	Type Type
	// Delim is the delimiter matched when Type is TypeInvalid.
	Delim byte
}

// TypeRegex returns the regex of type t.
func TypeRegex(t Type) Regex { return Regex{Type: t} }

// DelimRegex returns the regex matching delimiter d.
func DelimRegex(d byte) Regex { return Regex{Delim: d} }

func (r Regex) String() string {
	if r.Type != TypeInvalid {
		return r.Type.String()
	}
	return fmt.Sprintf("%q", r.Delim)
}

func (r Regex) valid() bool {
	if r.Type != TypeInvalid {
		return r.Type < numTypes && r.Delim == 0
	}
	return isDelim[r.Delim]
}

// Expr is one expression: a substring, a modification, a Compose or a
// ConstStr. Only the fields its Op uses are set; the rest stay zero, so two
// equal expressions compare equal with ==-like deep equality.
type Expr struct {
	// Op is the operation.
	Op Op
	// K1, K2 are SubStr's positions.
	K1, K2 int
	// R1, R2 are GetSpan's regexes; R1 is also GetUpto's and GetFrom's.
	R1, R2 Regex
	// I1, I2 are GetSpan's indices; I1 is also the index of GetToken,
	// GetFirst, Substitute and Remove.
	I1, I2 int
	// B1, B2 are GetSpan's boundaries.
	B1, B2 Boundary
	// T is the type of GetToken, GetFirst, GetAll, Substitute,
	// SubstituteAll, Remove and RemoveAll.
	T Type
	// Case is ToCase's case.
	Case Case
	// D1, D2 are Replace's delimiters.
	D1, D2 byte
	// C is the character of Substitute, SubstituteAll and ConstStr.
	C byte
	// Mod and Arg are Compose's modification and its argument:
	// Compose(Mod, Arg)(v) = Mod(Arg(v)).
	Mod, Arg *Expr
}

// Program is a Concat of expressions.
type Program []Expr

// Validate checks that every argument is in its Fig. 3 range.
func (p Program) Validate() error {
	if len(p) == 0 {
		return fmt.Errorf("empty program")
	}
	for i := range p {
		if err := p[i].Validate(); err != nil {
			return fmt.Errorf("expression %d: %w", i+1, err)
		}
	}
	return nil
}

func checkPos(k int) error {
	if k == 0 || k < -MaxPosition || k > MaxPosition {
		return fmt.Errorf("position %d out of range (-%d..%d, not 0)", k, MaxPosition, MaxPosition)
	}
	return nil
}

func checkIndex(i int) error {
	if i == 0 || i < -MaxIndex || i > MaxIndex {
		return fmt.Errorf("index %d out of range (-%d..%d, not 0)", i, MaxIndex, MaxIndex)
	}
	return nil
}

func checkType(t Type) error {
	if t == TypeInvalid || t >= numTypes {
		return fmt.Errorf("invalid type %v", t)
	}
	return nil
}

// Validate checks one expression; see Program.Validate.
func (e *Expr) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch e.Op {
	case SubStr:
		add(checkPos(e.K1))
		add(checkPos(e.K2))
	case GetSpan:
		if !e.R1.valid() || !e.R2.valid() {
			add(fmt.Errorf("invalid regex"))
		}
		add(checkIndex(e.I1))
		add(checkIndex(e.I2))
		if (e.B1 != Start && e.B1 != End) || (e.B2 != Start && e.B2 != End) {
			add(fmt.Errorf("invalid boundary"))
		}
	case GetUpto, GetFrom:
		if !e.R1.valid() {
			add(fmt.Errorf("invalid regex"))
		}
	case GetToken, GetFirst, Substitute, Remove:
		add(checkType(e.T))
		add(checkIndex(e.I1))
		if e.Op == Substitute && !isChar[e.C] {
			add(fmt.Errorf("invalid character %q", e.C))
		}
	case GetAll, SubstituteAll, RemoveAll:
		add(checkType(e.T))
		if e.Op == SubstituteAll && !isChar[e.C] {
			add(fmt.Errorf("invalid character %q", e.C))
		}
	case ToCase:
		if e.Case == CaseInvalid || e.Case >= numCases {
			add(fmt.Errorf("invalid case %v", e.Case))
		}
	case Replace:
		if !isDelim[e.D1] || !isDelim[e.D2] {
			add(fmt.Errorf("invalid delimiter"))
		}
	case Trim:
	case ConstStr:
		if !isChar[e.C] {
			add(fmt.Errorf("invalid character %q", e.C))
		}
	case Compose:
		if e.Mod == nil || e.Arg == nil {
			return fmt.Errorf("Compose: missing argument")
		}
		if !e.Mod.Op.IsModification() {
			return fmt.Errorf("Compose: first argument %v is not a modification", e.Mod.Op)
		}
		if !e.Arg.Op.IsModification() && !e.Arg.Op.IsSubstring() {
			return fmt.Errorf("Compose: second argument %v is not a modification or substring", e.Arg.Op)
		}
		if err := e.Mod.Validate(); err != nil {
			return fmt.Errorf("Compose: %w", err)
		}
		if err := e.Arg.Validate(); err != nil {
			return fmt.Errorf("Compose: %w", err)
		}
	default:
		return fmt.Errorf("invalid operation %v", e.Op)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v: %w", e.Op, errs[0])
	}
	return nil
}

// Equal reports whether two expressions are the same.
func (e *Expr) Equal(f *Expr) bool {
	if e == nil || f == nil {
		return e == f
	}
	a, b := *e, *f
	am, aa, bm, ba := a.Mod, a.Arg, b.Mod, b.Arg
	a.Mod, a.Arg, b.Mod, b.Arg = nil, nil, nil, nil
	return a == b && am.Equal(bm) && aa.Equal(ba)
}

// Equal reports whether two programs are the same.
func (p Program) Equal(q Program) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if !p[i].Equal(&q[i]) {
			return false
		}
	}
	return true
}
