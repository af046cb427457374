package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/data/cfq"
	"compbench/progress"
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
		for p := cfq.Train; p <= cfq.Test; p++ {
			outs = append(outs, files("--out-dir", filepath.Join(outDir, cfq.PartNames[p]+".jsonl"))...)
		}
	}
	if err := checkNotInput(outs, files("--text", src)); err != nil {
		return err
	}
	for _, o := range outs {
		if err := data.CheckFree(o.Path, force); err != nil {
			return err
		}
	}
	rel, err := cfq.OpenText(src)
	if err != nil {
		return fmt.Errorf("cfq import: %w", err)
	}
	defer rel.Close()

	set := data.NewOutputSet(force)
	var all *data.Encoder
	if out != "" {
		w, err := set.Create(out)
		if err != nil {
			return err
		}
		all = data.NewEncoder(w)
	}
	bar := progress.New(stderr, "import", rel.Size())
	defer bar.Finish()
	var counts [4]int
	for p := cfq.Train; p <= cfq.Test; p++ {
		var enc *data.Encoder
		if outDir != "" {
			w, err := set.Create(filepath.Join(outDir, cfq.PartNames[p]+".jsonl"))
			if err != nil {
				set.Abort()
				return err
			}
			enc = data.NewEncoder(w)
		}
		err := rel.Each(p, func(rec *data.Record, n int64) error {
			if counts[p]%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			counts[p]++
			bar.Add(n)
			for _, e := range []*data.Encoder{all, enc} {
				if e != nil {
					if err := e.Encode(rec); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			set.Abort()
			return fmt.Errorf("cfq import: %s: %w", src, err)
		}
	}
	if err := set.Commit(); err != nil {
		return err
	}
	total := counts[cfq.Train] + counts[cfq.Dev] + counts[cfq.Test]
	if out != "" {
		fmt.Fprintf(stdout, "wrote %d records to %s\n", total, out)
	}
	if outDir != "" {
		fmt.Fprintf(stdout, "wrote split to %s: train %d, dev %d, test %d\n", outDir, counts[cfq.Train], counts[cfq.Dev], counts[cfq.Test])
	}
	return nil
}
