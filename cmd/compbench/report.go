package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"compbench/report"
)

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report DIR [--format md|html|csv] [--csv] [--out FILE] [--plots PLOTDIR] [--paper NAME]", `
Tabulate a sweep (DIR written by compbench sweep) or one run folder: one row
per cell group (data, model, varied config values) with the mean ± sample
standard deviation over its seeds and n, the number of seeds finished, for
dev and test exact match (zero- and few-shot), RobustFill execution accuracy,
compound divergence, easiness AUC and training time. --format md (default)
prints a markdown table; csv one flat row per run, for pandas or R; html one
self-contained page with the table and SVG plots (learning curves per cell
group, one line per seed; test exact match against compound divergence when
the cells are splits; ROC curves of easiness against correctness when the
cells computed easiness). --plots also writes each plot as an SVG file.`, stderr)
	format := fs.String("format", "md", "output `FORMAT`: md, html or csv")
	asCSV := fs.Bool("csv", false, "same as --format csv")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	plots := fs.String("plots", "", "also write each plot to `PLOTDIR`/NAME.svg")
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
	if *plots != "" {
		if err := os.MkdirAll(*plots, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		for _, f := range figs {
			if err := writeAtomic(filepath.Join(*plots, f.Name), []byte(f.SVG)); err != nil {
				return fmt.Errorf("report: %w", err)
			}
		}
	}
	if *out == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	if err := writeAtomic(*out, b.Bytes()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
