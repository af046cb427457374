package robustfill

//lint:file-ignore ST1005 error messages start with the DSL operator they concern (Compose, SubStr, ...), whose names are capitalized

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The program JSON is a list of expressions, each ["Op", arg, ...]:
// integers as JSON numbers; types, cases and boundaries by their upper-case
// names; delimiters and characters as one-character strings; a regex as a
// type name or a one-character delimiter string; Compose as
// ["Compose", modification, inner]; ConstStr as ["ConstStr", "c"].
// Example: [["GetToken","ALPHANUM",3],["GetFrom",":"],["GetFirst","CHAR",4]].

// MarshalJSON writes the program JSON (compact, deterministic).
func (p Program) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.AppendJSON(nil), nil
}

// AppendJSON appends the JSON of a valid program to b.
func (p Program) AppendJSON(b []byte) []byte {
	b = append(b, '[')
	for i := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = p[i].appendJSON(b)
	}
	return append(b, ']')
}

func (e *Expr) appendJSON(b []byte) []byte {
	b = append(b, '[', '"')
	b = append(b, e.Op.String()...)
	b = append(b, '"')
	if e.Op == Compose {
		b = append(b, ',')
		b = e.Mod.appendJSON(b)
		b = append(b, ',')
		b = e.Arg.appendJSON(b)
	}
	for _, a := range e.args() {
		b = append(b, ',')
		switch a := a.(type) {
		case *int:
			b = strconv.AppendInt(b, int64(*a), 10)
		case *Type:
			b = appendJSONString(b, a.String())
		case *Regex:
			if a.Type != TypeInvalid {
				b = appendJSONString(b, a.Type.String())
			} else {
				b = appendJSONString(b, string(a.Delim))
			}
		case *Boundary:
			b = appendJSONString(b, a.String())
		case *Case:
			b = appendJSONString(b, a.String())
		case *byte:
			b = appendJSONString(b, string(*a))
		}
	}
	return append(b, ']')
}

// appendJSONString quotes s; DSL strings are printable ASCII, so only the
// quote and backslash need escapes, and anything else goes through
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			enc, _ := json.Marshal(s) // a string always marshals
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// UnmarshalJSON parses and validates program JSON.
func (p *Program) UnmarshalJSON(data []byte) error {
	q, err := ParseJSON(data)
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// ParseJSON parses program JSON strictly: every expression must have its
// operation's exact arguments, each of the right kind and in range.
func ParseJSON(data []byte) (Program, error) {
	var raw []json.RawMessage
	if err := strictUnmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("program: want a JSON list of expressions: %w", err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("program: empty list")
	}
	p := make(Program, len(raw))
	for i, r := range raw {
		if err := parseExprJSON(r, &p[i]); err != nil {
			return nil, fmt.Errorf("program: expression %d: %w", i+1, err)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("program: %w", err)
	}
	return p, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

func parseExprJSON(data json.RawMessage, e *Expr) error {
	var raw []json.RawMessage
	if err := strictUnmarshal(data, &raw); err != nil || len(raw) == 0 {
		return fmt.Errorf("want [\"Op\", args...], got %s", clip(data))
	}
	var name string
	if err := json.Unmarshal(raw[0], &name); err != nil {
		return fmt.Errorf("operation name: want a string, got %s", clip(raw[0]))
	}
	op, ok := parseOp(name)
	if !ok {
		return fmt.Errorf("unknown operation %q", name)
	}
	e.Op = op
	args := raw[1:]
	if op == Compose {
		if len(args) != 2 {
			return fmt.Errorf("Compose: want 2 arguments, got %d", len(args))
		}
		e.Mod, e.Arg = new(Expr), new(Expr)
		if err := parseExprJSON(args[0], e.Mod); err != nil {
			return fmt.Errorf("Compose: modification: %w", err)
		}
		if err := parseExprJSON(args[1], e.Arg); err != nil {
			return fmt.Errorf("Compose: inner: %w", err)
		}
		return nil
	}
	ptrs := e.args()
	if len(args) != len(ptrs) {
		return fmt.Errorf("%v: want %d arguments, got %d", op, len(ptrs), len(args))
	}
	for j, a := range ptrs {
		if err := parseArgJSON(args[j], a); err != nil {
			return fmt.Errorf("%v: argument %d: %w", op, j+1, err)
		}
	}
	return nil
}

func parseArgJSON(raw json.RawMessage, a any) error {
	if n, ok := a.(*int); ok {
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return fmt.Errorf("want an integer, got %s", clip(raw))
		}
		*n = v
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("want a string, got %s", clip(raw))
	}
	var ok bool
	switch a := a.(type) {
	case *Type:
		*a, ok = parseType(s)
	case *Regex:
		if t, isType := parseType(s); isType {
			*a, ok = TypeRegex(t), true
		} else if len(s) == 1 && isDelim[s[0]] {
			*a, ok = DelimRegex(s[0]), true
		}
	case *Boundary:
		*a, ok = parseBoundary(s)
	case *Case:
		*a, ok = parseCase(s)
	case *byte:
		if len(s) == 1 {
			*a, ok = s[0], true
		}
	}
	if !ok {
		return fmt.Errorf("invalid value %q for %s", s, argKindName(a))
	}
	return nil
}

func argKindName(a any) string {
	switch a.(type) {
	case *Type:
		return "a type"
	case *Regex:
		return "a regex (type or delimiter)"
	case *Boundary:
		return "a boundary"
	case *Case:
		return "a case"
	case *byte:
		return "a one-character string"
	}
	return "an argument"
}

// clip shortens raw JSON for an error message.
func clip(b []byte) string {
	const n = 40
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
