package main

import (
	"context"
	"fmt"
	"io"

	"compbench/provenance"
)

// runVersion prints the build: module version, VCS revision and dirty
// flag, Go version and build tags, so a result can be traced to its code.
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", `Print the compbench build: module version, VCS revision (and whether the
checkout had uncommitted changes), Go version and build tags. Run folders
and split.json record the same in their provenance.`, stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version: unexpected argument %q", pos[0])
	}
	fmt.Fprintln(stdout, provenance.Current())
	return nil
}
