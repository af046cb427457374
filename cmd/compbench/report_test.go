package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"compbench/data"
)

// TestReportHTMLChromium runs a tiny sweep (1 model x 2 seeds), writes the
// HTML report and the markdown table, and renders the page in headless
// Chromium: the screenshot must show the table (its grey header cells)
// and a plot (the first series' blue), with no network.
func TestReportHTMLChromium(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1,2", 6, 3)
	out := filepath.Join(dir, "out")
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local", "--jobs", "2"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := run(context.Background(), []string{"report", out}, &md, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| d | transformer | 2 |") {
		t.Errorf("table lacks the n=2 row:\n%s", md.String())
	}
	page, plots := filepath.Join(dir, "report.html"), filepath.Join(dir, "plots")
	if err := run(context.Background(), []string{"report", out, "--format", "html", "--out", page, "--plots", plots}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plots, "loss-d_transformer.svg")); err != nil {
		t.Errorf("plot file: %v", err)
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("chromium is not installed (make sweep-deps installs Debian's chromium): the HTML report was not rendered in a browser")
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1200,1400", "--screenshot="+shot, "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, b)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[3]uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
		}
	}
	for _, c := range []struct {
		name string
		rgb  [3]uint32
		min  int
	}{
		{"table header", [3]uint32{0xee, 0xee, 0xee}, 2000},
		{"plot series", [3]uint32{0x1f, 0x77, 0xb4}, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := counts[c.rgb]; n < c.min {
				t.Errorf("%d pixels of #%02x%02x%02x in the screenshot, want >= %d", n, c.rgb[0], c.rgb[1], c.rgb[2], c.min)
			}
		})
	}
}

// reportSweep runs a one-cell sweep into dir/out and returns OUT and the
// cell's folder.
func reportSweep(t *testing.T, dir string) (string, string) {
	t.Helper()
	sweepEnv(t)
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 2)
	out := filepath.Join(dir, "out")
	if _, errs, code := runCLI(t, "sweep", "--file", spec, "--out", out, "--local"); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	return out, filepath.Join(out, "cells", "d.transformer.seed1")
}

// TestReportOutputs: report replaces an existing --out or figure file
// (--figures, or --plots, its former name) only with --force, and never
// writes into a sweep or run it reads, even with --force and however the
// path is spelled. A refused report changes and leaves no file anywhere;
// one that writes writes all its files, each figure as SVG, PDF and PNG.
func TestReportOutputs(t *testing.T) {
	dir := t.TempDir()
	out, cell := reportSweep(t, dir)
	elsewhere := filepath.Join(dir, "elsewhere")
	os.MkdirAll(elsewhere, 0o755)
	if err := os.Symlink(out, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	// dir/celllink/../../sweep.json is OUT/sweep.json, not dir/../sweep.json.
	if err := os.Symlink(cell, filepath.Join(dir, "celllink")); err != nil {
		t.Fatal(err)
	}
	existing := writeFile(t, elsewhere, "old.md", "keep me\n")
	oldPlots := filepath.Join(elsewhere, "plots")
	os.MkdirAll(oldPlots, 0o755)
	oldSVG := writeFile(t, oldPlots, "loss-d_transformer.svg", "keep me\n")
	oldFigs := filepath.Join(elsewhere, "figs")
	os.MkdirAll(oldFigs, 0o755)
	oldPDF := writeFile(t, oldFigs, "loss-d_transformer.pdf", "keep me\n")
	inside := "never writes into the sweep or run it reads"
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"--out over sweep.json", []string{out, "--out", filepath.Join(out, "sweep.json"), "--force"}, 2, inside},
		{"--out over result.json", []string{out, "--out", filepath.Join(cell, "result.json"), "--force"}, 2, inside},
		{"--out over config.json", []string{out, "--out", filepath.Join(cell, "config.json"), "--force"}, 2, inside},
		{"--out over state.json", []string{out, "--out", filepath.Join(cell, "state.json"), "--force"}, 2, inside},
		{"--out over metrics.jsonl", []string{out, "--out", filepath.Join(cell, "metrics.jsonl"), "--force"}, 2, inside},
		{"--out over a checkpoint", []string{out, "--out", filepath.Join(cell, "model.safetensors"), "--force"}, 2, inside},
		{"--out new file in the sweep", []string{out, "--out", filepath.Join(out, "report.md")}, 2, inside},
		{"--out through a link to the sweep", []string{out, "--out", filepath.Join(dir, "link", "sweep.json"), "--force"}, 2, inside},
		{"--out spelled with ..", []string{out, "--out", elsewhere + "/../out/cells/../sweep.json", "--force"}, 2, inside},
		{"--out through a link then ..", []string{out, "--out", filepath.Join(dir, "celllink") + "/../../sweep.json", "--force"}, 2, inside},
		{"--out as the sweep folder", []string{out, "--out", out, "--force"}, 2, inside},
		{"--out into the run reported", []string{cell, "--out", filepath.Join(cell, "config.json"), "--force"}, 2, inside},
		{"--plots in the sweep", []string{out, "--plots", filepath.Join(out, "plots"), "--force"}, 2, inside},
		{"--plots in a cell", []string{out, "--format", "html", "--plots", cell, "--force"}, 2, inside},
		{"--figures in the sweep", []string{out, "--figures", filepath.Join(out, "figures"), "--force"}, 2, inside},
		{"--figures in the second folder", []string{elsewhere, out, "--figures", filepath.Join(cell, "figs")}, 2, inside},
		{"--plots and --figures differ", []string{out, "--plots", oldPlots, "--figures", filepath.Join(dir, "figs")}, 2, "former name of --figures"},
		{"no folder", []string{"--format", "html"}, 2, "want a sweep or run folder"},
		{"--out exists", []string{out, "--out", existing}, 1, "pass --force"},
		{"--plots SVG exists", []string{out, "--plots", oldPlots, "--out", filepath.Join(elsewhere, "new.md")}, 1, "pass --force"},
		{"--figures PDF exists", []string{out, "--figures", oldFigs, "--out", filepath.Join(elsewhere, "new.md")}, 1, "pass --force"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dir)
			_, errs, code := runCLI(t, append([]string{"report"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.msg) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, errs, tc.code, tc.msg)
			}
			after := snapshot(t, dir)
			for p, b := range before {
				if a, ok := after[p]; !ok || a != b {
					t.Errorf("%s changed or vanished", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("left %s behind", p)
				}
			}
			if data.Exists(filepath.Join(out, "plots")) {
				t.Errorf("made %s", filepath.Join(out, "plots"))
			}
		})
	}
	for _, tc := range []struct {
		name  string
		args  []string
		files []string // written, each holding a report or a plot
	}{
		{"--force replaces --out", []string{out, "--out", existing, "--force"}, []string{existing}},
		{"--force replaces plots", []string{out, "--plots", oldPlots, "--force"}, []string{oldSVG}},
		{"--force replaces figures", []string{out, "--figures", oldFigs, "--force"}, []string{oldPDF}},
		{"--figures in three formats", []string{out, "--figures", filepath.Join(dir, "figures")},
			[]string{filepath.Join(dir, "figures", "loss-d_transformer.svg"), filepath.Join(dir, "figures", "loss-d_transformer.pdf"), filepath.Join(dir, "figures", "loss-d_transformer.png")}},
		{"the cell as a run folder", []string{cell, "--out", filepath.Join(dir, "cell.md")}, []string{filepath.Join(dir, "cell.md")}},
		{"new files beside the sweep", []string{out, "--format", "html", "--out", filepath.Join(dir, "r.html"), "--plots", filepath.Join(dir, "plots")},
			[]string{filepath.Join(dir, "r.html"), filepath.Join(dir, "plots", "loss-d_transformer.svg")}},
		{"a device", []string{out, "--out", os.DevNull}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, errs, code := runCLI(t, append([]string{"report"}, tc.args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, f := range tc.files {
				if b, err := os.ReadFile(f); err != nil || string(b) == "keep me\n" {
					t.Errorf("%s: %q, %v; want the report's", f, b, err)
				}
			}
		})
	}
}

// TestReportRunFolders: report reads one run folder or several (no sweep):
// runs of one model and data that differ only in their seeds are one row.
func TestReportRunFolders(t *testing.T) {
	dir := t.TempDir()
	var runs []string
	for _, seed := range []string{"1", "2"} {
		run := filepath.Join(dir, "run"+seed)
		os.MkdirAll(run, 0o755)
		writeFile(t, run, "config.json", `{"model":{"variant":"relative"},"seed":`+seed+`}`)
		writeFile(t, run, "state.json", `{"step":10,"best_step":10,"best_em":0.25}`)
		writeFile(t, run, "metrics.jsonl", "{\"step\":10,\"loss\":1.5}\n{\"step\":10,\"dev_loss\":1,\"dev_em\":0.25}\n")
		runs = append(runs, run)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"one run", runs[:1], "| - | relative | 1 | 25.0 |"},
		{"two runs", runs, "| - | relative | 2 | 25.0 ± 0.0 |"},
		{"two runs, html", append([]string{"--format", "html"}, runs...), `<figure id="dev-em--_relative"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, append([]string{"report"}, tc.args...)...)
			if code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d (%s); output lacks %q:\n%s", code, errs, tc.want, out)
			}
		})
	}
	// A folder given twice (or by another spelling), or a cell beside its
	// sweep, would count its runs twice as seeds.
	sweepDir := filepath.Join(dir, "sweep")
	os.MkdirAll(filepath.Join(sweepDir, "cells", "x"), 0o755)
	writeFile(t, sweepDir, "sweep.json", "{}")
	for _, tc := range []struct{ name, a, b string }{
		{"same folder twice", runs[0], runs[0]},
		{"another spelling", runs[0], runs[0] + "/."},
		{"a cell of a sweep given", sweepDir, filepath.Join(sweepDir, "cells", "x")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "report", tc.a, tc.b)
			if code != 2 || !strings.Contains(errs, "would count twice") {
				t.Errorf("exit %d, stderr %q; want 2 and a refusal", code, errs)
			}
		})
	}
	t.Run("a run and its fine-tuned run", func(t *testing.T) {
		ft := filepath.Join(runs[0], "ft")
		os.MkdirAll(ft, 0o755)
		for _, f := range []string{"config.json", "state.json", "metrics.jsonl"} {
			b, _ := os.ReadFile(filepath.Join(runs[0], f))
			writeFile(t, ft, f, string(b))
		}
		if _, errs, code := runCLI(t, "report", runs[0], ft); code != 0 {
			t.Errorf("exit %d (%s): a run inside a run folder is a run of its own", code, errs)
		}
	})
}
