package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"compbench/data"
	"compbench/data/scan"
)

// Formats "compbench convert" writes; it reads every format data's
// readers know (data.Formats).
const (
	fmtSCANText = scan.TextFormat
	fmtJSONL    = data.FormatJSONL
	fmtAuto     = "auto"
)

// runConvert implements "compbench convert": any record format to JSONL
// records, and JSONL back to the original SCAN text format.
func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", "convert [--from auto|jsonl|tsv|scan-text] [--to jsonl|scan-text] --in FILE --out FILE", `
Convert a file of records to compbench's JSONL records, or JSONL back to the
original SCAN text format. --from auto (the default) takes the format from
the extension: .tsv is "source<TAB>target" or "source<TAB>target<TAB>category"
lines (COGS's published files; the third column becomes "category"), .txt
is SCAN's text format, anything else JSONL. Records of a .tsv or .txt file
get ids STEM-N, STEM the file name without extension and N the line number:
train.tsv gives train-1, train-2, ..., so the files of one dataset never
share an id.

The SCAN text format ("IN: ... OUT: I_TURN_LEFT I_JUMP" lines, as published
by Lake & Baroni): import parses every command, checks that its OUT
sequence is the command's translation, and adds parts and the derivation
tree. Import renames the actions to Shi et al.'s names, which compbench uses
everywhere: I_WALK I_LOOK I_RUN I_JUMP I_TURN_LEFT I_TURN_RIGHT become WALK
LOOK RUN JUMP LTURN RTURN. Export renames them back and writes input and
output as IN/OUT lines: a file imported and exported again is
byte-identical.`, stderr)
	from := fs.String("from", fmtAuto, "input `FORMAT`: auto (by extension), "+strings.Join(data.Formats(), ", "))
	to := fs.String("to", "", "output format: jsonl or scan-text (default: jsonl, or scan-text from jsonl)")
	in := fs.String("in", "", "input file (required)")
	out := fs.String("out", "", "output file (required)")
	force := fs.Bool("force", false, "replace an existing output file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("convert: unexpected argument %q", pos[0])
	}
	if *in == "" || *out == "" {
		return usagef("convert: --in and --out are required")
	}
	if *from == fmtAuto {
		*from = data.FormatOf(*in)
	}
	if !slices.Contains(data.Formats(), *from) {
		return usagef("convert: unknown --from %q (want auto, %s)", *from, strings.Join(data.Formats(), ", "))
	}
	if *to == "" {
		*to = fmtJSONL
		if *from == fmtJSONL {
			*to = fmtSCANText
		}
	}
	switch {
	case *to != fmtSCANText && *to != fmtJSONL:
		return usagef("convert: unknown --to %q (want jsonl or scan-text)", *to)
	case *from == *to:
		return usagef("convert: --from and --to are both %s", *from)
	}
	if err := checkNotInput(files("--out", *out), files("--in", *in)); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	set := data.NewOutputSet(*force)
	defer set.Abort() // no-op after Commit
	n, err := scan.Convert(ctx, *in, *from, *out, *to, set)
	if err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d records to %s (%s)\n", n, *out, *to)
	return nil
}
