package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"compbench/data"
	"compbench/report"
)

func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", "report DIR... [--format md|html|csv] [--csv] [--out FILE] [--figures FIGDIR] [--paper NAME] [--force]", `
Tabulate sweeps (DIR written by compbench sweep) and run folders (from
compbench train, or one cell): one row per cell group (data, model, varied
config values) with the mean ± sample standard deviation over its seeds and
n, the number of seeds finished, for dev and test exact match (zero- and
few-shot, in percent), RobustFill execution accuracy, compound divergence,
easiness AUC and training time. Several run folders of one model and data
are one row; config values that differ between them are columns. Each
dataset's split statistics (sizes, D_A, D_C, length ratios, pattern
coverage) come from its split.json, or a stats.json beside it.

--format md (default) prints markdown tables; csv one flat row per run, for
pandas or R; html one self-contained page with the tables and the figures
inline. The figures: test exact match against compound divergence with error
bars over seeds, one series per model, when the datasets are splits
(Keysers et al. 2020, Figure 2); training loss and dev exact match against
step per cell group, one line per seed; and ROC curves of easiness against
correctness when the cells computed easiness. --figures FIGDIR also writes
each figure as FIGDIR/NAME.svg, .pdf and .png (300 dpi), for a paper.
An existing output is replaced only with --force, and never one inside a
DIR: a report does not write into the sweep or run it reads.`, stderr)
	format := fs.String("format", "md", "output `FORMAT`: md, html or csv")
	asCSV := fs.Bool("csv", false, "same as --format csv")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	figures := fs.String("figures", "", "also write each figure to `FIGDIR`/NAME.svg, NAME.pdf and NAME.png")
	plots := fs.String("plots", "", "the former name of --figures (`FIGDIR`)")
	force := fs.Bool("force", false, "replace an existing --out file or figure file")
	paper := fs.String("paper", "", "put a paper's published numbers beside ours: "+strings.Join(report.PaperNames(), ", "))
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("report: want a sweep or run folder (or several)")
	}
	if *asCSV {
		*format = "csv"
	}
	if *format != "md" && *format != "html" && *format != "csv" {
		return usagef("report: --format %q: want md, html or csv", *format)
	}
	if _, ok := report.Papers[*paper]; *paper != "" && !ok {
		return usagef("report: --paper %q: want one of %s", *paper, strings.Join(report.PaperNames(), ", "))
	}
	figFlag := "--figures"
	switch {
	case *plots != "" && *figures != "" && *plots != *figures:
		return usagef("report: --plots is the former name of --figures: give one of them")
	case *plots != "":
		*figures, figFlag = *plots, "--plots"
	}
	if err := report.Distinct(pos); err != nil {
		return usagef("report: %v", err)
	}
	if err := checkOutside(pos, files("--out", *out), files(figFlag, *figures)); err != nil {
		return err
	}
	if *out != "" {
		if err := data.CheckFree(*out, *force); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	r, err := report.Load(pos...)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if *paper != "" {
		if err := r.SetPaper(*paper); err != nil {
			return err
		}
	}
	page, err := r.Emit(report.Output{Format: *format, Out: *out, Figures: *figures, Force: *force})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = stdout.Write(page)
	return err
}

// checkOutside refuses, as a usage error and even with --force, an output
// that is one of the reported folders dirs or lies inside one
// (report.Inside).
func checkOutside(dirs []string, outs ...[]data.Named) error {
	for _, dir := range dirs {
		for _, o := range join(outs...) {
			if report.Inside(o.Path, dir) {
				return usagef("report: %s %s is inside %s, the folder it reports; a report never writes into the sweep or run it reads, even with --force", o.Flag, o.Path, dir)
			}
		}
	}
	return nil
}
