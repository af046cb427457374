package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"compbench/data/cfq"
)

// cfqTextExcludes are the import flags that describe dataset.json and
// have no meaning for a text release.
var cfqTextExcludes = []string{"in", "split", "format", "raw-entities", "keep"}

// runCFQText implements "cfq import --text": a text release (CFQ's MCD1
// zip, or the folder CFQ's preprocessing writes) as DIR/train.jsonl,
// dev.jsonl and test.jsonl (--out-dir) and/or one file of all its
// examples (--out), train then dev then test.
func runCFQText(ctx context.Context, fs *flag.FlagSet, src, out, outDir string, force bool, stdout, stderr io.Writer) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		for _, x := range cfqTextExcludes {
			if f.Name == x {
				bad = append(bad, "--"+x)
			}
		}
	})
	if len(bad) > 0 {
		return usagef("cfq import: --text reads a text release, which has its parts and preprocessing: drop %s", strings.Join(bad, " and "))
	}
	if out == "" && outDir == "" {
		return usagef("cfq import: give --out-dir and/or --out")
	}
	outs := files("--out", out)
	if outDir != "" {
		outs = append(outs, files("--out-dir", cfq.PartPaths(outDir)...)...)
	}
	if err := checkNotInput(outs, files("--text", src)); err != nil {
		return err
	}
	sum, err := cfq.ImportText(ctx, cfq.TextOptions{Src: src, Out: out, OutDir: outDir, Force: force, Status: stderr})
	if err != nil {
		return err
	}
	if out != "" {
		fmt.Fprintf(stdout, "wrote %d records to %s\n", sum.Records, out)
	}
	if outDir != "" {
		fmt.Fprintf(stdout, "wrote split to %s: train %d, dev %d, test %d\n", outDir, sum.Train, sum.Dev, sum.Test)
	}
	return nil
}
