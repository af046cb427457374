package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/data/cfq"
	"compbench/data/scan"
	"compbench/progress"
)

// runCFQ implements "compbench cfq import|export-split".
func runCFQ(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("cfq: no subcommand given (import or export-split)")
	}
	if args[0] == "--help" || args[0] == "-h" || args[0] == "-help" {
		fmt.Fprint(stdout, `usage: compbench cfq import|export-split [flags]

Load CFQ's dataset.json and published CFQ / SCAN MCD split files.
  import        convert dataset.json (or SCAN tasks.txt, or JSONL) to records
                and, with --split, write a published split as train/dev/test
  export-split  write a split folder back as {"trainIdxs","devIdxs","testIdxs"}
Run "compbench cfq SUBCOMMAND --help" for flags.
`)
		return nil
	}
	switch args[0] {
	case "import":
		return runCFQImport(ctx, args[1:], stdout, stderr)
	case "export-split":
		return runCFQExport(args[1:], stdout, stderr)
	}
	return usagef("cfq: unknown subcommand %q (want import or export-split)", args[0])
}

func runCFQImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cfq import", "cfq import --in FILE [--out data.jsonl] [--split split.json --out-dir DIR] [flags]\n       cfq import --text RELEASE [--out-dir DIR] [--out all.jsonl]", `
Read CFQ's dataset.json (streamed), SCAN's tasks.txt or a JSONL file of
records, and write records (--out) and/or the parts of a published split
(--split with --out-dir: DIR/train.jsonl, DIR/dev.jsonl, DIR/test.jsonl).
Split indexes count examples in file order: dataset.json array elements,
tasks.txt lines, JSONL records. CFQ questions and queries get the baselines'
preprocessing; by default the entity-masked pattern fields are used.

--text reads a split as CFQ's preprocessing writes it (CFQ's MCD1 release:
the zip, or a folder holding train/, dev/ and test/ with PART_encode.txt
and PART_decode.txt), ids train-N, dev-N, test-N. It has no rule trees:
measure it with --tree sparql (docs/cfq.md).`, stderr)
	in := fs.String("in", "", "input file (required)")
	text := fs.String("text", "", "a text release `ZIP-or-DIR` instead of --in (no --split: it holds its parts)")
	format := fs.String("format", "auto", "input format: cfq (dataset.json), scan (tasks.txt), tsv, jsonl, or auto (by extension: .json, .txt, .tsv, else jsonl)")
	out := fs.String("out", "", "write every record here (JSONL)")
	splitPath := fs.String("split", "", "published split file {\"trainIdxs\",\"devIdxs\",\"testIdxs\"}")
	outDir := fs.String("out-dir", "", "folder for the split's train/dev/test JSONL (with --split)")
	raw := fs.Bool("raw-entities", false, "CFQ: use question/sparql (real entities) instead of the pattern fields")
	keep := fs.String("keep", strings.Join(cfq.DefaultKeep, ","), "CFQ: comma-separated fields kept in each record, or \"all\"")
	force := fs.Bool("force", false, "replace existing output files")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("cfq import: unexpected argument %q", pos[0])
	}
	if *text != "" {
		return runCFQText(ctx, fs, *text, *out, *outDir, *force, stdout, stderr)
	}
	if *in == "" {
		return usagef("cfq import: --in is required (or --text for a text release)")
	}
	if *out == "" && *outDir == "" {
		return usagef("cfq import: give --out, or --split with --out-dir")
	}
	if (*splitPath == "") != (*outDir == "") {
		return usagef("cfq import: --split and --out-dir go together")
	}
	cfg := cfq.Config{RawEntities: *raw, Keep: cfq.ParseKeep(*keep)}
	if err := cfg.Validate(); err != nil {
		return usagef("cfq import: %v", err)
	}
	kind := *format
	if kind == "auto" {
		switch strings.ToLower(filepath.Ext(*in)) {
		case ".json":
			kind = "cfq"
		case ".txt":
			kind = "scan"
		case ".tsv":
			kind = "tsv"
		default:
			kind = "jsonl"
		}
	}
	if kind != "cfq" && kind != "scan" && kind != "tsv" && kind != "jsonl" {
		return usagef("cfq import: unknown --format %q", *format)
	}
	outs := files("--out", *out)
	if *outDir != "" {
		for p := cfq.Train; p <= cfq.Test; p++ {
			outs = append(outs, files("--out-dir", filepath.Join(*outDir, cfq.PartNames[p]+".jsonl"))...)
		}
	}
	if err := checkNotInput(outs, join(files("--in", *in), files("--split", *splitPath))); err != nil {
		return err
	}
	var split *cfq.Split
	var route map[int]int8 // example index -> part
	if *splitPath != "" {
		if split, err = cfq.ReadSplit(*splitPath); err != nil {
			return err
		}
		if err := checkIndexes(split, *splitPath, *in); err != nil {
			return err
		}
		route = split.Route()
	}

	set := data.NewOutputSet(*force)
	var all *data.Encoder
	if *out != "" {
		w, err := set.Create(*out)
		if err != nil {
			return err
		}
		all = data.NewEncoder(w)
	}
	var partEnc [4]*data.Encoder
	if split != nil {
		for p := cfq.Train; p <= cfq.Test; p++ {
			w, err := set.Create(filepath.Join(*outDir, cfq.PartNames[p]+".jsonl"))
			if err != nil {
				return err
			}
			partEnc[p] = data.NewEncoder(w)
		}
	}
	n := 0
	emit := func(rec *data.Record) error {
		// A record without text would train or score as "".
		if err := data.CheckText(n+1, rec, true); err != nil {
			return fmt.Errorf("%s: %w", *in, err)
		}
		if all != nil {
			if err := all.Encode(rec); err != nil {
				return err
			}
		}
		if p := route[n]; p != cfq.None {
			if err := partEnc[p].Encode(rec); err != nil {
				return err
			}
		}
		n++
		return nil
	}
	if err := importRecords(ctx, *in, kind, cfg, emit, stderr); err != nil {
		set.Abort()
		return fmt.Errorf("cfq import: %w", err)
	}
	if split != nil {
		if _, err := split.Parts(n); err != nil {
			set.Abort()
			return fmt.Errorf("cfq import: %s: %w", *splitPath, err)
		}
	}
	if err := set.Commit(); err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %d records to %s\n", n, *out)
	}
	if split != nil {
		tr, dv, te := split.Sizes()
		fmt.Fprintf(stdout, "wrote split to %s: train %d, dev %d, test %d (of %d examples)\n", *outDir, tr, dv, te, n)
	}
	return nil
}

// checkIndexes refuses, before any output is created, a split index that
// cannot be an example of in: every example takes at least one byte, so a
// regular file of N bytes holds fewer than N. (Indexes below that are
// checked against the count once the input is read.)
func checkIndexes(s *cfq.Split, splitPath, in string) error {
	st, err := os.Stat(in)
	if err != nil || !st.Mode().IsRegular() {
		return nil // a pipe: checked after the read
	}
	for p, l := range [][]int{s.Train, s.Dev, s.Test} {
		for _, i := range l {
			if int64(i) >= st.Size() {
				return fmt.Errorf("cfq import: %s: %s index %d is out of range: %s has %d bytes, so fewer examples", splitPath, cfq.PartNames[p+1], i, in, st.Size())
			}
		}
	}
	return nil
}

// importRecords streams the input's records to emit, in file order.
func importRecords(ctx context.Context, path, kind string, cfg cfq.Config, emit func(*data.Record) error, stderr io.Writer) error {
	f, err := data.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	bar := progress.New(stderr, "import", st.Size())
	defer bar.Finish()
	br := bufio.NewReaderSize(f, 1<<20)
	switch kind {
	case "scan":
		return decodeRecords(ctx, br, path, scan.TextFormat, emit)
	case "tsv", "jsonl":
		return decodeRecords(ctx, br, path, kind, emit)
	}
	r, err := cfq.NewReader(br)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var last int64
	n := 0
	for {
		e, err := r.Next()
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
		off := r.Offset()
		bar.Add(off - last)
		last = off
	}
	if n == 0 {
		return fmt.Errorf("%s: no examples (empty array)", path)
	}
	return nil
}

// decodeRecords streams the records of r, read from path in format, to
// emit through data's reader (ids as data.ReadRecords gives them),
// stopping when ctx ends.
func decodeRecords(ctx context.Context, r io.Reader, path, format string, emit func(*data.Record) error) error {
	n := 0
	var emitErr error
	err := data.Decode(r, format, data.IDPrefix(path), func(rec *data.Record) error {
		n++
		if n%1024 == 0 && ctx.Err() != nil {
			emitErr = ctx.Err()
		} else {
			emitErr = emit(rec)
		}
		return emitErr
	})
	switch {
	case emitErr != nil:
		return emitErr
	case err != nil:
		return fmt.Errorf("%s: %w", path, err)
	case n == 0:
		return fmt.Errorf("%s: no records (empty file)", path)
	}
	return nil
}

func runCFQExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cfq export-split", "cfq export-split --pool data.jsonl --dir DIR --out split.json", `
Write the split in DIR (train.jsonl, dev.jsonl, test.jsonl; dev may be
missing) as a published-format split file whose indexes count the records of
--pool in file order, so other tools can load it.`, stderr)
	pool := fs.String("pool", "", "the records the split indexes, in order (required)")
	dir := fs.String("dir", "", "split folder with train/dev/test JSONL (required)")
	out := fs.String("out", "", "split file to write (required)")
	force := fs.Bool("force", false, "replace an existing output file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("cfq export-split: unexpected argument %q", pos[0])
	}
	if *pool == "" || *dir == "" || *out == "" {
		return usagef("cfq export-split: --pool, --dir and --out are required")
	}
	if err := checkNotInput(files("--out", *out), join(files("--pool", *pool), splitPaths("--dir", *dir))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	recs, err := data.ReadRecords(*pool)
	if err != nil {
		return err
	}
	index := make(map[string]int, len(recs))
	for i := range recs {
		index[recs[i].ID] = i
	}
	var split cfq.Split
	for p, dst := range []*[]int{&split.Train, &split.Dev, &split.Test} {
		path := filepath.Join(*dir, cfq.PartNames[p+1]+".jsonl")
		if _, err := os.Stat(path); err != nil && p == 1 {
			continue // no dev part
		}
		part, err := data.ReadRecords(path)
		if err != nil && !(p == 1 && strings.Contains(err.Error(), "no records")) {
			return err
		}
		for _, r := range part {
			i, ok := index[r.ID]
			if !ok {
				return fmt.Errorf("%s: id %q is not in %s", path, r.ID, *pool)
			}
			*dst = append(*dst, i)
		}
	}
	if _, err := split.Parts(len(recs)); err != nil {
		return fmt.Errorf("%s: %w", *dir, err)
	}
	set := data.NewOutputSet(*force)
	w, err := set.Create(*out)
	if err != nil {
		return err
	}
	if err := split.Encode(w); err != nil {
		set.Abort()
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	tr, dv, te := split.Sizes()
	fmt.Fprintf(stdout, "wrote %s: train %d, dev %d, test %d\n", *out, tr, dv, te)
	return nil
}
