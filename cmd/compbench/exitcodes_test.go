package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/split"
)

// TestSplitFlagValueExitCodes: a flag value no split accepts is a usage
// error (exit status 2, the flag named, pointing at the help) found before
// anything is written, as are the other flags' mistakes.
func TestSplitFlagValueExitCodes(t *testing.T) {
	dir := t.TempDir()
	pool := writeSCAN(t, dir, ".jsonl")
	recs, err := split.LoadPool(pool)
	if err != nil {
		t.Fatal(err)
	}
	var scores strings.Builder
	for i, r := range recs {
		fmt.Fprintf(&scores, "{\"id\":%q,\"score\":%d}\n", r.ID, -i)
	}
	scoreFile := writeSplitFile(t, dir, "scores.jsonl", scores.String())
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"length --by", []string{"length", "--by", "size"}, 2, `--by "size"`},
		{"template --by", []string{"template", "--by", ""}, 2, `--by ""`},
		{"likelihood --by", []string{"likelihood", "--scores", scoreFile, "--by", "tokens"}, 2, `--by "tokens"`},
		{"template --k-test", []string{"template", "--k-test", "-1"}, 2, "--k-test -1"},
		{"template --k-train", []string{"template", "--k-train", "-3"}, 2, "--k-train -3"},
		{"template --max-tries", []string{"template", "--max-tries", "0"}, 2, "--max-tries 0"},
		{"tmcd --swaps", []string{"tmcd", "--swaps", "-1"}, 2, "--swaps -1"},
		{"likelihood --len-buckets negative", []string{"likelihood", "--scores", scoreFile, "--len-buckets", "-2"}, 2, "--len-buckets -2"},
		{"likelihood --len-buckets over the pool", []string{"likelihood", "--scores", scoreFile, "--len-buckets", "100000"}, 2, "--len-buckets 100000"},
		{"length --by input", []string{"length", "--by", "input"}, 0, ""},
		{"likelihood --len-buckets 3", []string{"likelihood", "--scores", scoreFile, "--len-buckets", "3"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.NewReplacer(" ", "-", "/", "-").Replace(tc.name))
			args := append([]string{"split"}, tc.args...)
			_, errs, code := runCLI(t, append(args, "--in", pool, "--out", out, "--tree", "scan")...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, tc.code, tc.msg)
			}
			if code == 0 {
				return
			}
			if !strings.HasSuffix(errs, "see compbench split --help\n") || strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q: want one line pointing at the help", errs)
			}
			if got := outputs(t, out); len(got) > 0 {
				t.Errorf("a refused split wrote %v", got)
			}
		})
	}
}

// TestSweepFileExitCodes: a sweep file or folder that cannot be read is a
// failure (exit status 1, no pointer to the help), and one that reads but
// is wrong is a usage error (2).
func TestSweepFileExitCodes(t *testing.T) {
	dir := t.TempDir()
	absent := filepath.Join(dir, "absent.json")
	bad := writeSplitFile(t, dir, "bad.json", `{"models":["transformer"],"seeds":[1],"tasks":["length"],"sedes":[2]}`)
	notSweep := filepath.Join(dir, "empty")
	os.MkdirAll(notSweep, 0o755)
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"--file missing", []string{"--file", absent, "--out", out, "--local"}, 1, "absent.json: no such file"},
		{"--file a folder", []string{"--file", dir, "--out", out, "--local"}, 1, "is a directory"},
		{"--status missing", []string{"--status", filepath.Join(dir, "nowhere")}, 1, "no such file"},
		{"--status not a sweep", []string{"--status", notSweep}, 1, "sweep.json: no such file"},
		{"--file with an unknown key", []string{"--file", bad, "--out", out, "--local"}, 2, `unknown field "sedes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, append([]string{"sweep"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.msg) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want %d and one line with %q", code, errs, tc.code, tc.msg)
			}
			if help := strings.Contains(errs, "--help"); help != (tc.code == 2) {
				t.Errorf("stderr %q: the help is pointed at only for a usage error", errs)
			}
			if data.Exists(out) {
				t.Errorf("%s was written", out)
			}
		})
	}
}
