package cfq

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/data/scan"
	"compbench/progress"
)

// Input formats Import reads: CFQ's dataset.json, SCAN's tasks.txt, and
// data's TSV and JSONL records.
const (
	FormatCFQ  = "cfq"
	FormatSCAN = "scan"
)

// InputFormat resolves an input format name for path: "auto" picks by the
// extension (.json is dataset.json, .txt tasks.txt, .tsv TSV, else JSONL).
// ok is false for a name Import does not read.
func InputFormat(format, path string) (kind string, ok bool) {
	kind = format
	if kind == "auto" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".json":
			kind = FormatCFQ
		case ".txt":
			kind = FormatSCAN
		case ".tsv":
			kind = data.FormatTSV
		default:
			kind = data.FormatJSONL
		}
	}
	switch kind {
	case FormatCFQ, FormatSCAN, data.FormatTSV, data.FormatJSONL:
		return kind, true
	}
	return kind, false
}

// PartPaths are the files of a split folder Import writes, train, dev and
// test in order.
func PartPaths(dir string) []string {
	var out []string
	for p := Train; p <= Test; p++ {
		out = append(out, filepath.Join(dir, PartNames[p]+".jsonl"))
	}
	return out
}

// ImportOptions describe one import; the caller has checked that they go
// together (an output, Split with OutDir) and that no output is an input.
type ImportOptions struct {
	In     string // the examples
	Format string // one InputFormat accepts, resolved
	Config Config // how CFQ examples become records
	Out    string // every record, when set
	Split  string // a published split file, written to OutDir's parts
	OutDir string
	Force  bool      // replace existing outputs
	Status io.Writer // progress, or nil
}

// Summary counts what an import or an export wrote.
type Summary struct {
	Records          int // examples read
	Train, Dev, Test int // the split's parts
}

// Import converts In's examples to records, written in file order to Out
// and, through the split file, to OutDir's train, dev and test parts. The
// outputs appear together or, on an error, not at all.
func Import(ctx context.Context, o ImportOptions) (Summary, error) {
	var split *Split
	var route map[int]int8 // example index -> part
	if o.Split != "" {
		var err error
		if split, err = ReadSplit(o.Split); err != nil {
			return Summary{}, err
		}
		if err := checkIndexes(split, o.Split, o.In); err != nil {
			return Summary{}, err
		}
		route = split.Route()
	}
	set := data.NewOutputSet(o.Force)
	all, err := createEncoder(set, o.Out)
	if err != nil {
		return Summary{}, err
	}
	var partEnc [4]*data.Encoder
	if split != nil {
		for i, path := range PartPaths(o.OutDir) {
			if partEnc[Train+int8(i)], err = createEncoder(set, path); err != nil {
				return Summary{}, err
			}
		}
	}
	n := 0
	emit := func(rec *data.Record) error {
		// A record without text would train or score as "".
		if err := data.CheckText(n+1, rec, true); err != nil {
			return fmt.Errorf("%s: %w", o.In, err)
		}
		if all != nil {
			if err := all.Encode(rec); err != nil {
				return err
			}
		}
		if p := route[n]; p != None {
			if err := partEnc[p].Encode(rec); err != nil {
				return err
			}
		}
		n++
		return nil
	}
	if err := importRecords(ctx, o, emit); err != nil {
		set.Abort()
		return Summary{}, fmt.Errorf("cfq import: %w", err)
	}
	sum := Summary{Records: n}
	if split != nil {
		if _, err := split.Parts(n); err != nil {
			set.Abort()
			return Summary{}, fmt.Errorf("cfq import: %s: %w", o.Split, err)
		}
		sum.Train, sum.Dev, sum.Test = split.Sizes()
	}
	return sum, set.Commit()
}

// createEncoder creates path in set; no path, no encoder.
func createEncoder(set *data.OutputSet, path string) (*data.Encoder, error) {
	if path == "" {
		return nil, nil
	}
	w, err := set.Create(path)
	if err != nil {
		return nil, err
	}
	return data.NewEncoder(w), nil
}

// checkIndexes refuses, before any output is created, a split index that
// cannot be an example of in: every example takes at least one byte, so a
// regular file of N bytes holds fewer than N. (Indexes below that are
// checked against the count once the input is read.)
func checkIndexes(s *Split, splitPath, in string) error {
	st, err := os.Stat(in)
	if err != nil || !st.Mode().IsRegular() {
		return nil // a pipe: checked after the read
	}
	for p, l := range [][]int{s.Train, s.Dev, s.Test} {
		for _, i := range l {
			if int64(i) >= st.Size() {
				return fmt.Errorf("cfq import: %s: %s index %d is out of range: %s has %d bytes, so fewer examples", splitPath, PartNames[p+1], i, in, st.Size())
			}
		}
	}
	return nil
}

// importRecords streams the input's records to emit, in file order.
func importRecords(ctx context.Context, o ImportOptions, emit func(*data.Record) error) error {
	f, err := data.Open(o.In)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	bar := progress.New(o.Status, "import", st.Size())
	defer bar.Finish()
	br := bufio.NewReaderSize(f, 1<<20)
	switch o.Format {
	case FormatSCAN:
		return eachRecord(ctx, br, o.In, scan.TextFormat, emit)
	case data.FormatTSV, data.FormatJSONL:
		return eachRecord(ctx, br, o.In, o.Format, emit)
	}
	return eachExample(ctx, br, o.In, o.Config, bar, emit)
}

// eachRecord streams the records of r through data's reader, stopping
// when ctx ends.
func eachRecord(ctx context.Context, r io.Reader, path, format string, emit func(*data.Record) error) error {
	n := 0
	return data.EachRecordIn(r, path, format, func(rec *data.Record) error {
		n++
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		return emit(rec)
	})
}

// eachExample streams the examples of dataset.json as records.
func eachExample(ctx context.Context, r io.Reader, path string, cfg Config, bar *progress.Bar, emit func(*data.Record) error) error {
	dr, err := NewReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var last int64
	n := 0
	for {
		e, err := dr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if e.Index%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := e.Record(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := emit(&rec); err != nil {
			return err
		}
		n++
		off := dr.Offset()
		bar.Add(off - last)
		last = off
	}
	if n == 0 {
		return fmt.Errorf("%s: no examples (empty array)", path)
	}
	return nil
}
