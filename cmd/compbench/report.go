package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/report"
)

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report DIR [--format md|html|csv] [--csv] [--out FILE] [--plots PLOTDIR] [--paper NAME] [--force]", `
Tabulate a sweep (DIR written by compbench sweep) or one run folder: one row
per cell group (data, model, varied config values) with the mean ± sample
standard deviation over its seeds and n, the number of seeds finished, for
dev and test exact match (zero- and few-shot), RobustFill execution accuracy,
compound divergence, easiness AUC and training time. --format md (default)
prints a markdown table; csv one flat row per run, for pandas or R; html one
self-contained page with the table and SVG plots (learning curves per cell
group, one line per seed; test exact match against compound divergence when
the cells are splits; ROC curves of easiness against correctness when the
cells computed easiness). --plots also writes each plot as an SVG file.
An existing output is replaced only with --force, and never one inside DIR:
a report does not write into the sweep or run it reads.`, stderr)
	format := fs.String("format", "md", "output `FORMAT`: md, html or csv")
	asCSV := fs.Bool("csv", false, "same as --format csv")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	plots := fs.String("plots", "", "also write each plot to `PLOTDIR`/NAME.svg")
	force := fs.Bool("force", false, "replace an existing --out file or --plots SVG")
	paper := fs.String("paper", "", "put a paper's published numbers beside ours: "+strings.Join(report.PaperNames(), ", "))
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("report: want one sweep or run folder")
	}
	if *asCSV {
		*format = "csv"
	}
	switch *format {
	case "md", "html", "csv":
	default:
		return usagef("report: --format %q: want md, html or csv", *format)
	}
	if _, ok := report.Papers[*paper]; *paper != "" && !ok {
		return usagef("report: --paper %q: want one of %s", *paper, strings.Join(report.PaperNames(), ", "))
	}
	for _, o := range []data.Named{{Flag: "--out", Path: *out}, {Flag: "--plots", Path: *plots}} {
		if err := checkOutside(o, pos[0]); err != nil {
			return err
		}
	}
	if *out != "" {
		if err := data.CheckFree(*out, *force); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	r, err := report.Load(pos[0])
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if *paper != "" {
		if err := r.SetPaper(*paper); err != nil {
			return err
		}
	}
	var figs []report.Figure
	if *format == "html" || *plots != "" {
		if figs, err = r.Figures(); err != nil {
			return fmt.Errorf("report: plots: %w", err)
		}
	}
	var b bytes.Buffer
	switch *format {
	case "md":
		err = r.WriteMarkdown(&b)
	case "csv":
		err = r.WriteCSV(&b)
	case "html":
		err = r.WriteHTML(&b, figs)
	}
	if err != nil {
		return err
	}
	// All or nothing: the plots and --out are renamed into place together,
	// and an existing one (without --force) stops the report before any is.
	set := data.NewOutputSet(*force)
	if *plots != "" {
		for _, f := range figs {
			w, err := set.Create(filepath.Join(*plots, f.Name))
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if _, err := io.WriteString(w, f.SVG); err != nil {
				set.Abort()
				return fmt.Errorf("report: %w", err)
			}
		}
	}
	if *out == "" {
		if err := set.Commit(); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		_, err = stdout.Write(b.Bytes())
		return err
	}
	w, err := set.Create(*out)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		set.Abort()
		return fmt.Errorf("report: %w", err)
	}
	if err := set.Commit(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// checkOutside refuses, as a usage error and even with --force, an output
// that is the reported folder dir or lies inside it, however spelled
// (symbolic links, "..", another name for the same folder): the sweep's
// sweep.json, its cells' result.json, config.json and checkpoints are what
// the report reads, and a sweep still running writes there.
func checkOutside(o data.Named, dir string) error {
	if o.Path == "" {
		return nil
	}
	dst, err := os.Stat(dir)
	if err != nil {
		return nil // not a folder: report.Load says so
	}
	p := resolvePath(o.Path)
	for {
		if st, err := os.Stat(p); err == nil && os.SameFile(st, dst) {
			return usagef("report: %s %s is inside %s, the folder it reports; a report never writes into the sweep or run it reads, even with --force", o.Flag, o.Path, dir)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}

// resolvePath is path made absolute with the symbolic links of its
// longest existing part resolved, so that a ".." after a link climbs from
// where the link points, as the kernel's does; the missing rest, which
// holds no link, is joined on.
func resolvePath(path string) string {
	if !filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			path = wd + string(filepath.Separator) + path // not Join: it would clean ".." before links are read
		}
	}
	rest := ""
	for head := path; ; {
		if resolved, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(resolved, rest)
		}
		i := strings.LastIndexByte(head, filepath.Separator)
		switch {
		case i < 0:
			return filepath.Clean(path)
		case i == 0:
			return filepath.Join(head[:1], head[1:], rest)
		}
		head, rest = head[:i], filepath.Join(head[i+1:], rest)
	}
}
