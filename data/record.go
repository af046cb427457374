package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Record is one example. Every record has ID, Input and Output; the other
// fields belong to particular domains and are omitted when empty. Fields that
// compbench does not know (CFQ's, a user's own) are kept in Extra and written
// back unchanged, so re-splitting a dataset never loses information.
type Record struct {
	// ID is unique within a file.
	ID string
	// Input is the model's source string.
	Input string
	// Output is the model's target string, tokens separated by single spaces.
	Output string
	// Category is the example's group in a published evaluation (COGS: its
	// generalization case, or in_distribution), for results by group.
	Category string
	// Parts is the output split into program parts, in output order (SCAN).
	Parts []string
	// Tree is the derivation of the example (SCAN: grammar rules applied).
	Tree *Tree
	// Inputs are the I/O example input strings (RobustFill).
	Inputs []string
	// Outputs are the I/O example output strings, same length as Inputs.
	Outputs []string
	// Program is the program as JSON (RobustFill: a list of expressions).
	Program json.RawMessage
	// Extra holds any other top-level field, raw, keyed by name.
	Extra map[string]json.RawMessage
}

// RequireText fails on the first record without an input (an empty or
// blank Input and no I/O examples in Inputs), or, when output is set,
// without an output: a model cannot learn from, or be judged on, an example
// that has nothing on one side. Records count from 1, in file order.
func RequireText(recs []Record, output bool) error {
	for i := range recs {
		if err := CheckText(i+1, &recs[i], output); err != nil {
			return err
		}
	}
	return nil
}

// CheckText is RequireText's test of one record, the n-th of its file, for
// readers that stream records.
func CheckText(n int, r *Record, output bool) error {
	switch {
	case strings.TrimSpace(r.Input) == "" && len(r.Inputs) == 0:
		return fmt.Errorf(`record %d (id %q) has no "input"`, n, r.ID)
	case output && strings.TrimSpace(r.Output) == "":
		return fmt.Errorf(`record %d (id %q) has no "output"`, n, r.ID)
	}
	return nil
}

// knownKeys are the fields Record decodes itself.
var knownKeys = map[string]bool{
	"id": true, "input": true, "output": true, "category": true, "parts": true, "tree": true,
	"inputs": true, "outputs": true, "program": true,
}

// MarshalJSON writes the known fields in a fixed order, then Extra sorted by
// key, so the same record always gives the same bytes.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := r.appendJSON(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r *Record) appendJSON(b *bytes.Buffer) error {
	b.WriteByte('{')
	writeKey(b, "id", true)
	writeString(b, r.ID)
	writeKey(b, "input", false)
	writeString(b, r.Input)
	writeKey(b, "output", false)
	writeString(b, r.Output)
	if r.Category != "" {
		writeKey(b, "category", false)
		writeString(b, r.Category)
	}
	if r.Parts != nil {
		writeKey(b, "parts", false)
		writeStrings(b, r.Parts)
	}
	if r.Tree != nil {
		writeKey(b, "tree", false)
		if err := writeTree(b, r.Tree); err != nil {
			return err
		}
	}
	if r.Inputs != nil {
		writeKey(b, "inputs", false)
		writeStrings(b, r.Inputs)
	}
	if r.Outputs != nil {
		writeKey(b, "outputs", false)
		writeStrings(b, r.Outputs)
	}
	if len(r.Program) > 0 {
		writeKey(b, "program", false)
		if err := json.Compact(b, r.Program); err != nil {
			return fmt.Errorf("record %q: program: %w", r.ID, err)
		}
	}
	if len(r.Extra) > 0 {
		keys := make([]string, 0, len(r.Extra))
		for k := range r.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			writeKey(b, k, false)
			if err := json.Compact(b, r.Extra[k]); err != nil {
				return fmt.Errorf("record %q: field %q: %w", r.ID, k, err)
			}
		}
	}
	b.WriteByte('}')
	return nil
}

// UnmarshalJSON reads a record object; unknown fields go to Extra.
func (r *Record) UnmarshalJSON(p []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p, &m); err != nil {
		return err
	}
	*r = Record{}
	get := func(key string, dst any) error {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		return nil
	}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"id", &r.ID}, {"input", &r.Input}, {"output", &r.Output},
		{"category", &r.Category}, {"parts", &r.Parts}, {"tree", &r.Tree}, {"inputs", &r.Inputs},
		{"outputs", &r.Outputs},
	} {
		if err := get(f.key, f.dst); err != nil {
			return err
		}
	}
	if raw, ok := m["program"]; ok && string(raw) != "null" {
		r.Program = append(json.RawMessage(nil), raw...)
	}
	for k, v := range m {
		if knownKeys[k] {
			continue
		}
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[k] = append(json.RawMessage(nil), v...)
	}
	return nil
}

func writeKey(b *bytes.Buffer, k string, first bool) {
	if !first {
		b.WriteByte(',')
	}
	writeString(b, k)
	b.WriteByte(':')
}

func writeStrings(b *bytes.Buffer, ss []string) {
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, s)
	}
	b.WriteByte(']')
}

func writeTree(b *bytes.Buffer, t *Tree) error {
	if t == nil {
		b.WriteString("null")
		return nil
	}
	b.WriteString(`{"label":`)
	writeString(b, t.Label)
	if len(t.Children) > 0 {
		b.WriteString(`,"children":[`)
		for i, c := range t.Children {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeTree(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return nil
}

// writeString writes s as a JSON string. Plain printable ASCII (the common
// case for generated data) is copied directly; anything else goes through
// encoding/json so escaping matches the standard library, except that <, >
// and & stay readable (files are for people, not HTML pages).
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			enc := json.NewEncoder(b)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)       // a string always encodes
			b.Truncate(b.Len() - 1) // Encode appends a newline
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}
