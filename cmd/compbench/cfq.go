package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"compbench/data/cfq"
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
	kind, ok := cfq.InputFormat(*format, *in)
	if !ok {
		return usagef("cfq import: unknown --format %q", *format)
	}
	outs := files("--out", *out)
	if *outDir != "" {
		outs = append(outs, files("--out-dir", cfq.PartPaths(*outDir)...)...)
	}
	if err := checkNotInput(outs, join(files("--in", *in), files("--split", *splitPath))); err != nil {
		return err
	}
	sum, err := cfq.Import(ctx, cfq.ImportOptions{In: *in, Format: kind, Config: cfg, Out: *out,
		Split: *splitPath, OutDir: *outDir, Force: *force, Status: stderr})
	if err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %d records to %s\n", sum.Records, *out)
	}
	if *splitPath != "" {
		fmt.Fprintf(stdout, "wrote split to %s: train %d, dev %d, test %d (of %d examples)\n", *outDir, sum.Train, sum.Dev, sum.Test, sum.Records)
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
	sum, err := cfq.ExportSplit(*pool, *dir, *out, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: train %d, dev %d, test %d\n", *out, sum.Train, sum.Dev, sum.Test)
	return nil
}
