package main

import (
	"bytes"
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
	switch *format {
	case "md", "html", "csv":
	default:
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
	for _, dir := range pos {
		for _, o := range []data.Named{{Flag: "--out", Path: *out}, {Flag: figFlag, Path: *figures}} {
			if err := checkOutside(o, dir); err != nil {
				return err
			}
		}
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
	var figs []report.Figure
	if *format == "html" || *figures != "" {
		if figs, err = r.Figures(); err != nil {
			return fmt.Errorf("report: figures: %w", err)
		}
	}
	var b bytes.Buffer
	if err := r.Write(&b, *format, figs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// All or nothing: the figures and --out are renamed into place
	// together, and an existing one (without --force) stops the report
	// before any is.
	set := data.NewOutputSet(*force)
	if *figures != "" {
		if err := report.WriteFigures(set, *figures, figs); err != nil {
			set.Abort()
			return fmt.Errorf("report: %w", err)
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
// that is the reported folder dir or lies inside it (report.Inside).
func checkOutside(o data.Named, dir string) error {
	if o.Path != "" && report.Inside(o.Path, dir) {
		return usagef("report: %s %s is inside %s, the folder it reports; a report never writes into the sweep or run it reads, even with --force", o.Flag, o.Path, dir)
	}
	return nil
}
