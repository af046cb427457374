package cfq

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"compbench/data"
)

// Config controls how CFQ examples become records.
type Config struct {
	// RawEntities uses the question and sparql fields (real entity names)
	// instead of questionPatternModEntities and sparqlPatternModEntities
	// (entities replaced by M0, M1, ...), which the baselines use.
	RawEntities bool
	// Keep lists the CFQ fields copied into the record's Extra, under their
	// CFQ names; "all" keeps every field.
	Keep []string
}

// DefaultKeep are the fields kept by default: the rule tree (the source of
// CFQ atoms and compounds) and the entity-masked pattern fields.
var DefaultKeep = []string{"ruleTree", "questionPatternModEntities", "sparqlPatternModEntities"}

// DefaultConfig uses the pattern fields and keeps DefaultKeep.
func DefaultConfig() Config { return Config{Keep: DefaultKeep} }

// reserved are record fields a kept CFQ field must not replace.
var reserved = map[string]bool{"id": true, "input": true, "output": true, "parts": true,
	"tree": true, "inputs": true, "outputs": true, "program": true}

// Validate rejects kept fields that would collide with record fields.
func (c Config) Validate() error {
	for _, k := range c.Keep {
		if k == "" {
			return fmt.Errorf("empty field name in keep list")
		}
		if reserved[k] {
			return fmt.Errorf("cannot keep CFQ field %q: it is a record field", k)
		}
	}
	return nil
}

// Example is one element of dataset.json, its fields kept raw.
type Example struct {
	// Index is the example's position in the array (what split files index).
	Index int
	// Fields holds every field of the object, undecoded.
	Fields map[string]json.RawMessage
}

// String returns a string field, or an error naming the example.
func (e *Example) String(name string) (string, error) {
	raw, ok := e.Fields[name]
	if !ok {
		return "", fmt.Errorf("example %d: no %q field", e.Index, name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("example %d: field %q is not a string", e.Index, name)
	}
	return s, nil
}

// Record converts the example: id cfq-<index>, input the preprocessed
// question, output the preprocessed query, Extra the kept fields.
func (e *Example) Record(cfg Config) (data.Record, error) {
	qf, sf := "questionPatternModEntities", "sparqlPatternModEntities"
	if cfg.RawEntities {
		qf, sf = "question", "sparql"
	}
	q, err := e.String(qf)
	if err != nil {
		return data.Record{}, err
	}
	s, err := e.String(sf)
	if err != nil {
		return data.Record{}, err
	}
	rec := data.Record{ID: fmt.Sprintf("cfq-%d", e.Index), Input: TokenizePunctuation(q), Output: PreprocessSPARQL(s)}
	keep := cfg.Keep
	if len(keep) == 1 && keep[0] == "all" {
		keep = make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			if !reserved[k] {
				keep = append(keep, k)
			}
		}
		sort.Strings(keep)
	}
	for _, k := range keep {
		if raw, ok := e.Fields[k]; ok {
			if rec.Extra == nil {
				rec.Extra = map[string]json.RawMessage{}
			}
			rec.Extra[k] = raw
		}
	}
	return rec, nil
}

// Reader streams the examples of a dataset.json array one at a time.
type Reader struct {
	dec  *json.Decoder
	next int
	done bool
}

// NewReader reads the opening "[" of the array.
func NewReader(r io.Reader) (*Reader, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("empty file, want a JSON array of CFQ examples")
		}
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("want a JSON array of CFQ examples, found %v", tok)
	}
	return &Reader{dec: dec}, nil
}

// Next returns the next example, or io.EOF after the last.
func (r *Reader) Next() (*Example, error) {
	if r.done {
		return nil, io.EOF
	}
	if !r.dec.More() {
		if _, err := r.dec.Token(); err != nil { // the closing "]"
			return nil, fmt.Errorf("after example %d: %w", r.next-1, err)
		}
		if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("data after the closing ]")
		}
		r.done = true
		return nil, io.EOF
	}
	var fields map[string]json.RawMessage
	if err := r.dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("example %d: %w", r.next, unexpectedEOF(err))
	}
	if fields == nil {
		return nil, fmt.Errorf("example %d: null, want an object", r.next)
	}
	e := &Example{Index: r.next, Fields: fields}
	r.next++
	return e, nil
}

// Offset is the number of input bytes consumed so far (for progress).
func (r *Reader) Offset() int64 { return r.dec.InputOffset() }

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ParseKeep splits a comma-separated --keep value.
func ParseKeep(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
