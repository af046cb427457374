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
