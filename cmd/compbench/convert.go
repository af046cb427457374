package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"compbench/data"
	"compbench/data/scan"
)

// Formats "compbench convert" reads and writes.
const (
	fmtSCANText = "scan-text"
	fmtJSONL    = "jsonl"
)

// runConvert implements "compbench convert": the original SCAN text format to
// JSONL records and back.
func runConvert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", "convert --from scan-text|jsonl [--to jsonl|scan-text] --in FILE --out FILE", `
Convert between the original SCAN text format ("IN: ... OUT: I_TURN_LEFT
I_JUMP" lines, as published by Lake & Baroni) and compbench's JSONL records.
Import parses every command, checks that its OUT sequence is the command's
translation, and adds parts and the derivation tree; ids are scan-<line>.
Import renames the actions to Shi et al.'s names, which compbench uses
everywhere: I_WALK I_LOOK I_RUN I_JUMP I_TURN_LEFT I_TURN_RIGHT become WALK
LOOK RUN JUMP LTURN RTURN. Export renames them back and writes input and
output as IN/OUT lines: a file imported and exported again is
byte-identical.`, stderr)
	from := fs.String("from", "", "input format: scan-text or jsonl (required)")
	to := fs.String("to", "", "output format: jsonl or scan-text (default: the other one)")
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
	if *to == "" {
		switch *from {
		case fmtSCANText:
			*to = fmtJSONL
		case fmtJSONL:
			*to = fmtSCANText
		}
	}
	switch {
	case *from == "":
		return usagef("convert: --from is required (scan-text or jsonl)")
	case *from != fmtSCANText && *from != fmtJSONL:
		return usagef("convert: unknown --from %q (want scan-text or jsonl)", *from)
	case *to != fmtSCANText && *to != fmtJSONL:
		return usagef("convert: unknown --to %q (want jsonl or scan-text)", *to)
	case *from == *to:
		return usagef("convert: --from and --to are both %s", *from)
	case *in == "" || *out == "":
		return usagef("convert: --in and --out are required")
	}
	if err := checkNotInput(files("--out", *out), files("--in", *in)); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	set := data.NewOutputSet(*force)
	defer set.Abort() // no-op after Commit
	var n int
	if *from == fmtSCANText {
		n, err = scanTextToJSONL(ctx, *in, *out, set)
	} else {
		n, err = jsonlToSCANText(*in, *out, set)
	}
	if err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d records to %s (%s)\n", n, *out, *to)
	return nil
}

func scanTextToJSONL(ctx context.Context, in, out string, set *data.OutputSet) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w, err := set.Create(out)
	if err != nil {
		return 0, err
	}
	enc := data.NewEncoder(w)
	n := 0
	err = scan.ReadText(f, func(rec *data.Record) error {
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return enc.Encode(rec)
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", in, err)
	}
	return n, nil
}

func jsonlToSCANText(in, out string, set *data.OutputSet) (int, error) {
	recs, err := data.ReadRecords(in)
	if err != nil {
		return 0, err
	}
	w, err := set.Create(out)
	if err != nil {
		return 0, err
	}
	if err := scan.WriteText(w, recs); err != nil {
		return 0, fmt.Errorf("%s: %w", in, err)
	}
	return len(recs), nil
}
