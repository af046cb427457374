package main

import (
	"context"
	"fmt"
	"io"

	"compbench/data"
	"compbench/data/scan"
)

// runGenSCANOriginal implements "compbench gen scan-original": every
// command of Lake & Baroni's original SCAN grammar, the pool that their
// tasks.txt holds and that Keysers et al. split by MCD, without needing
// the file.
func runGenSCANOriginal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen scan-original", "gen scan-original --out FILE.jsonl [flags]", `
Write the 20,910 commands of the original SCAN grammar (Lake & Baroni 2018:
one phrase, or two joined by "and" or "after") as JSONL records with their
translation, program parts and derivation tree, ids scan-orig-1 ... in a
fixed order. It is the pool of SCAN's tasks.txt (which "compbench convert"
imports, with its own ids and order), for split random, length, mcd or
tmcd. Shi et al.'s extended grammar, with longer commands, is "gen scan".`, stderr)
	out := fs.String("out", "", "output `FILE` (.jsonl, required)")
	force := fs.Bool("force", false, "replace an existing output file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("gen scan-original: unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usagef("gen scan-original: --out is required")
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	cmds := scan.OriginalCommands()
	recs := make([]data.Record, len(cmds))
	for i := range cmds {
		recs[i] = cmds[i].TextRecord()
		recs[i].ID = fmt.Sprintf("scan-orig-%d", i+1)
	}
	if err := data.WriteRecords(*out, recs, *force); err != nil {
		return fmt.Errorf("gen scan-original: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %d records to %s\n", len(recs), *out)
	return nil
}
