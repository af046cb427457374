package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// Record files come in three kinds of format, chosen by the file name's
// extension (FormatOf), so that every command reads every kind:
//
//   - JSONL, one record a line (.jsonl, .json and any other name);
//   - TSV, "source<TAB>target" or "source<TAB>target<TAB>category" lines
//     (.tsv), as COGS (Kim & Linzen 2020) publishes its data;
//   - line formats registered by other packages: data/scan registers SCAN's
//     "IN: ... OUT: ..." text (.txt). data/scan imports this package, so
//     this package cannot call it; it registers itself from an init
//     function instead, and any binary that imports data/scan reads .txt.
//
// Records of non-JSONL files get ids STEM-N, STEM the file's name without
// its extension and N the line number counted from 1 (IDPrefix): the files
// of one dataset (train.tsv, gen.tsv) give distinct ids, and the same file
// always the same ids, which split.json files rely on.
const (
	FormatJSONL = "jsonl"
	FormatTSV   = "tsv"
)

// LineParser turns one non-blank line, without its line ending, into a
// record; the reader sets the record's id.
type LineParser func(line string) (Record, error)

type lineFormat struct {
	ext   string
	parse LineParser
}

// lineFormats are the registered formats by name. They are written only by
// init functions, before any reader runs, so they need no lock.
var lineFormats = map[string]lineFormat{}

// RegisterLineFormat makes a one-record-a-line text format known under name,
// for files whose extension is ext (".txt"). Call it from an init function.
// A name or extension registered twice panics: two packages disagreeing on
// a format is a programming error, not bad input.
func RegisterLineFormat(name, ext string, parse LineParser) {
	ext = strings.ToLower(ext)
	if name == FormatJSONL || name == FormatTSV || ext == ".tsv" || ext == ".jsonl" || ext == ".json" {
		panic(fmt.Sprintf("data: format %q (%s) is built in", name, ext))
	}
	for n, f := range lineFormats {
		if n == name || f.ext == ext {
			panic(fmt.Sprintf("data: format %q (%s) registered twice", name, ext))
		}
	}
	lineFormats[name] = lineFormat{ext: ext, parse: parse}
}

// Formats lists the format names the readers know: jsonl, tsv, then the
// registered ones in name order.
func Formats() []string {
	var reg []string
	for n := range lineFormats {
		reg = append(reg, n)
	}
	slices.Sort(reg)
	return append([]string{FormatJSONL, FormatTSV}, reg...)
}

// FormatOf names the format of path by its extension, ignoring case: .tsv
// is tsv, a registered extension its format, anything else jsonl.
func FormatOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".tsv" {
		return FormatTSV
	}
	for n, f := range lineFormats {
		if f.ext == ext {
			return n
		}
	}
	return FormatJSONL
}

// IDPrefix is the stem of the ids given to the records of a non-JSONL file:
// its name without directory and extension (gen.tsv: gen, giving gen-1,
// gen-2, ...).
func IDPrefix(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// ReadRecords reads a file of records in the format its extension names
// (FormatOf). Blank lines are skipped. It fails, naming the file and line,
// on a malformed line, on a JSONL record without an id or with an id that
// repeats, and on a file without records.
func ReadRecords(path string) ([]Record, error) {
	return ReadFormat(path, FormatOf(path))
}

// ReadFormat is ReadRecords with the format named (one of Formats) instead
// of taken from the extension.
func ReadFormat(path, format string) ([]Record, error) {
	var recs []Record
	err := EachRecord(path, format, func(r *Record) error {
		recs = append(recs, *r)
		return nil
	})
	return recs, err
}

// EachRecord streams the records of path, read in the named format, to fn
// in file order; see ReadRecords. An error from fn stops the read and comes
// back as it is.
func EachRecord(path, format string, fn func(r *Record) error) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return EachRecordIn(f, path, format, fn)
}

// EachRecordIn is EachRecord on r, already opened from path: for a caller
// that holds the file (to measure its progress, or a FIFO that cannot be
// opened twice). path names the records' ids and the errors.
func EachRecordIn(r io.Reader, path, format string, fn func(r *Record) error) error {
	n := 0
	var fnErr error
	err := Decode(r, format, IDPrefix(path), func(r *Record) error {
		n++
		fnErr = fn(r)
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case n == 0:
		return fmt.Errorf("%s: no records (empty file)", path)
	}
	return nil
}

// Decode streams the records of r, in the named format, to fn. Records of a
// TSV or line format get ids prefix-N, N the line number counted from 1
// (blank lines are counted and skipped). An error about the input names the
// line; an error from fn stops the read and comes back as it is.
func Decode(r io.Reader, format, prefix string, fn func(r *Record) error) error {
	var parse func(line int, s string) (Record, error)
	switch format {
	case FormatJSONL:
		seen := map[string]int{}
		parse = func(line int, s string) (Record, error) { return jsonlRecord(line, s, seen) }
		prefix = ""
	case FormatTSV:
		parse = newTSV().parse
	default:
		lf, ok := lineFormats[format]
		if !ok {
			return fmt.Errorf("unknown record format %q (want one of %s)", format, strings.Join(Formats(), ", "))
		}
		parse = func(_ int, s string) (Record, error) { return lf.parse(s) }
	}
	var fnErr error
	err := eachTextLine(r, func(line int, s string) error {
		rec, err := parse(line, s)
		if err != nil {
			return err
		}
		if prefix != "" {
			rec.ID = fmt.Sprintf("%s-%d", prefix, line)
		}
		fnErr = fn(&rec)
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// eachTextLine calls fn with the 1-based number and the text of every
// non-blank line, without its line ending ("\n" or "\r\n": bufio.ScanLines
// drops one "\r") but otherwise untrimmed, so that a TSV's empty last field
// stays visible. An error of fn comes back prefixed with the line number.
func eachTextLine(r io.Reader, fn func(line int, s string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if strings.TrimSpace(s) == "" {
			continue
		}
		if err := fn(line, s); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
	return scanErr(sc, line)
}

func scanErr(sc *bufio.Scanner, line int) error {
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than %d MiB", line+1, maxLine>>20)
		}
		return err
	}
	return nil
}

// tsvFields names the columns of a TSV line, for errors.
var tsvFields = [...]string{"source", "target", "category"}

// tsvReader parses TSV lines; every line of a file must have the number of
// fields of its first, so a stray tab is caught where it occurs.
type tsvReader struct{ fields, first int }

func newTSV() *tsvReader { return &tsvReader{} }

func (t *tsvReader) parse(line int, s string) (Record, error) {
	f := strings.Split(s, "\t")
	if len(f) < 2 || len(f) > 3 {
		return Record{}, fmt.Errorf("%d tab-separated fields, want source<TAB>target or source<TAB>target<TAB>category", len(f))
	}
	if t.fields == 0 {
		t.fields, t.first = len(f), line
	} else if len(f) != t.fields {
		return Record{}, fmt.Errorf("%d tab-separated fields, but line %d has %d", len(f), t.first, t.fields)
	}
	for i, v := range f {
		if strings.TrimSpace(v) == "" {
			return Record{}, fmt.Errorf("field %d (%s) is empty", i+1, tsvFields[i])
		}
	}
	rec := Record{Input: f[0], Output: f[1]}
	if len(f) == 3 {
		rec.Category = f[2]
	}
	return rec, nil
}
