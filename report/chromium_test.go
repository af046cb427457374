package report

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var screenshot = flag.String("screenshot", "", "also save TestReportChromium's screenshot of the sample report to `FILE` (docs/report-sample.png)")

// chromium runs headless Chromium on page with args, skipping the test
// where it is not installed.
func chromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
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
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile")}, args...)
	cmd := exec.CommandContext(ctx, browser, append(args, "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

var (
	figureRE = regexp.MustCompile(`(?s)<figure id="([^"]+)"[^>]*>(.*?)</figure>`)
	textRE   = regexp.MustCompile(`<text x="([^"]+)" y="([^"]+)"[^>]*>([^<]*)</text>`)
	numberRE = regexp.MustCompile(`^-?[0-9][0-9,]*(\.[0-9]+)?%?$`)
)

// TestReportChromium renders the sample report (a fake sweep in testdata)
// in headless Chromium. In the DOM Chromium built, every figure's axes are
// labelled at round steps (1, 2 or 5 × 10^k apart, no exponents) and
// accuracy axes read 0% to 100%; the screenshot shows the tables and the
// figures.
func TestReportChromium(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "sample", "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b, figs); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, page, "--dump-dom"))
	found := figureRE.FindAllStringSubmatch(dom, -1)
	if len(found) < 20 {
		t.Fatalf("%d figures in the DOM, want the sample's 20 or more", len(found))
	}
	for _, fig := range found {
		name, body := fig[1], fig[2]
		texts := textRE.FindAllStringSubmatch(body, -1)
		if len(texts) == 0 {
			continue // a figure left out, with its reason
		}
		t.Run(name, func(t *testing.T) {
			// Tick labels along the x axis share a baseline; those of the
			// y axis are the other numbers.
			byY := map[string][]int{}
			for i, tx := range texts {
				if numberRE.MatchString(tx[3]) {
					byY[tx[2]] = append(byY[tx[2]], i)
				}
				if strings.ContainsAny(tx[3], "eE") && numberRE.MatchString(strings.NewReplacer("e", "", "E", "", "+", "").Replace(tx[3])) {
					t.Errorf("label %q in exponent notation", tx[3])
				}
			}
			var xAxis []int
			for _, at := range byY {
				if len(at) > len(xAxis) {
					xAxis = at
				}
			}
			var xs, ys []string
			for _, tx := range texts {
				switch {
				case !numberRE.MatchString(tx[3]):
				case tx[2] == texts[xAxis[0]][2]:
					xs = append(xs, tx[3])
				default:
					ys = append(ys, tx[3])
				}
			}
			for _, axis := range [][]string{xs, ys} {
				checkRound(t, axis)
			}
			if name == "accuracy-vs-divergence" || strings.HasPrefix(name, "dev-em-") {
				if got := strings.Join(ys, " "); got != "100% 80% 60% 40% 20% 0%" && got != "0% 20% 40% 60% 80% 100%" {
					t.Errorf("accuracy axis reads %q, want 0%% to 100%% in steps of 20%%", got)
				}
			}
		})
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	chromium(t, page, "--hide-scrollbars", "--window-size=1200,1800", "--screenshot="+shot)
	f, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[[3]uint32]int{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			counts[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	for _, c := range []struct {
		name string
		rgb  [3]uint32
		min  int
	}{
		{"table headers", [3]uint32{0xee, 0xee, 0xee}, 5000},
		{"first series", [3]uint32{0x1f, 0x77, 0xb4}, 300},
		{"second series", [3]uint32{0xff, 0x7f, 0x0e}, 300},
	} {
		t.Run("screenshot "+c.name, func(t *testing.T) {
			if n := counts[c.rgb]; n < c.min {
				t.Errorf("%d pixels of #%02x%02x%02x in the screenshot, want >= %d", n, c.rgb[0], c.rgb[1], c.rgb[2], c.min)
			}
		})
	}
	if *screenshot != "" {
		if err := os.WriteFile(*screenshot, f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRound fails unless labels, in order either way, are at least two
// numbers evenly 1, 2 or 5 × 10^k apart.
func checkRound(t *testing.T, labels []string) {
	t.Helper()
	if len(labels) < 2 {
		t.Errorf("axis labels %q: want two or more", labels)
		return
	}
	v := make([]float64, len(labels))
	for i, l := range labels {
		x, err := strconv.ParseFloat(strings.NewReplacer(",", "", "%", "").Replace(l), 64)
		if err != nil {
			t.Fatalf("label %q: %v", l, err)
		}
		v[i] = x
	}
	step := math.Abs(v[1] - v[0])
	m := step / math.Pow10(int(math.Floor(math.Log10(step)+1e-9)))
	if math.Abs(m-1) > 1e-6 && math.Abs(m-2) > 1e-6 && math.Abs(m-5) > 1e-6 {
		t.Errorf("axis labels %q: step %v is not 1, 2 or 5 × 10^k", labels, step)
	}
	for i := 2; i < len(v); i++ {
		if math.Abs(math.Abs(v[i]-v[i-1])-step) > step*1e-6 {
			t.Errorf("axis labels %q are not evenly spaced", labels)
			break
		}
	}
}
