package lm

import (
	"encoding/json"
	"fmt"
	"strings"

	"compbench/data"
)

// Template is a prompt such as "write a database question: {query}"
// (Godbole & Jia, Table 1). {query} is the scored text; other {name}s are
// record fields (id, input, output or any extra string field) that condition
// it. Decision: {query} must appear exactly once and end the template,
// because the paper scores the query as the continuation of the prompt.
type Template struct {
	text string
	// prefix is the text before {query}, split at field references.
	prefix []tplPart
}

type tplPart struct {
	lit   string
	field string // non-empty for a {field} reference
}

// DefaultTemplate scores the query on its own after <|endoftext|>, the
// paper's fine-tuning format.
const DefaultTemplate = EndOfText + "{query}"

// ParseTemplate checks a template.
func ParseTemplate(s string) (*Template, error) {
	if strings.Count(s, "{query}") != 1 || !strings.HasSuffix(s, "{query}") {
		return nil, fmt.Errorf("template %q: {query} must appear exactly once, at the end", s)
	}
	t := &Template{text: s}
	rest := strings.TrimSuffix(s, "{query}")
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.prefix = append(t.prefix, tplPart{lit: rest})
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("template %q: unclosed {", s)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{ ") {
			return nil, fmt.Errorf("template %q: bad field reference {%s}", s, name)
		}
		if i > 0 {
			t.prefix = append(t.prefix, tplPart{lit: rest[:i]})
		}
		t.prefix = append(t.prefix, tplPart{field: name})
		rest = rest[i+j+1:]
	}
	return t, nil
}

// String returns the template text.
func (t *Template) String() string { return t.text }

// Prefix renders the conditioning text for rec.
func (t *Template) Prefix(rec *data.Record) (string, error) {
	var b strings.Builder
	for _, p := range t.prefix {
		if p.field == "" {
			b.WriteString(p.lit)
			continue
		}
		v, err := Field(rec, p.field)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// Field returns a record's string field by its JSON name.
func Field(rec *data.Record, name string) (string, error) {
	switch name {
	case "id":
		return rec.ID, nil
	case "input":
		return rec.Input, nil
	case "output":
		return rec.Output, nil
	}
	raw, ok := rec.Extra[name]
	if !ok {
		return "", fmt.Errorf("record %q has no field %q", rec.ID, name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("record %q: field %q is not a string", rec.ID, name)
	}
	return s, nil
}
