package data

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one line of a record file; CFQ records with rule trees
// reach ~100 kB.
const maxLine = 64 << 20

// DecodeRecords reads JSONL records from r. Blank lines are skipped. It
// fails on malformed JSON, a missing id, or an id that repeats, naming the
// line.
func DecodeRecords(r io.Reader) ([]Record, error) {
	var recs []Record
	err := Decode(r, FormatJSONL, "", func(rec *Record) error {
		recs = append(recs, *rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// jsonlRecord decodes one JSONL line; seen maps the ids so far to their
// lines.
func jsonlRecord(line int, s string, seen map[string]int) (Record, error) {
	var rec Record
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if rec.ID == "" {
		return Record{}, errors.New(`record has no "id"`)
	}
	if prev, ok := seen[rec.ID]; ok {
		return Record{}, fmt.Errorf("id %q repeats (first on line %d)", rec.ID, prev)
	}
	seen[rec.ID] = line
	return rec, nil
}

// EachLine calls fn with the 1-based number and the trimmed bytes of every
// non-blank line of a JSONL stream (lines up to 64 MiB). An error from fn
// stops the scan and comes back prefixed with the line number. p is only
// valid during the call.
func EachLine(r io.Reader, fn func(line int, p []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	line := 0
	for sc.Scan() {
		line++
		p := bytes.TrimSpace(sc.Bytes())
		if len(p) == 0 {
			continue
		}
		if err := fn(line, p); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return scanErr(sc, line)
}

// Encoder writes records as JSONL.
type Encoder struct {
	w   io.Writer
	buf bytes.Buffer
}

// NewEncoder returns an encoder writing to w; wrap w in a bufio.Writer for
// speed (OutputSet's files already are).
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes one record and a newline.
func (e *Encoder) Encode(r *Record) error {
	e.buf.Reset()
	if err := r.appendJSON(&e.buf); err != nil {
		return err
	}
	e.buf.WriteByte('\n')
	_, err := e.w.Write(e.buf.Bytes())
	return err
}

// WriteRecords writes recs as one JSONL file at path, atomically.
func WriteRecords(path string, recs []Record, overwrite bool) error {
	set := NewOutputSet(overwrite)
	w, err := set.Create(path)
	if err != nil {
		return err
	}
	enc := NewEncoder(w)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			set.Abort()
			return err
		}
	}
	return set.Commit()
}
