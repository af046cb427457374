package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// countdownCtx is a context whose Err turns to Canceled after n calls: a
// signal that arrives at a known point of a command.
type countdownCtx struct {
	context.Context
	n atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestSplitSearchStopsOnSignal: a signal during the search of split mcd,
// tmcd or likelihood ends the command with exit status 1 and no split
// folder (the searches used to run to the end and write the split).
func TestSplitSearchStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".jsonl")
	scores := writeScores(t, dir, in)
	for _, tc := range []struct {
		method string
		extra  []string
	}{{"mcd", nil}, {"tmcd", nil}, {"likelihood", []string{"--scores", scores, "--atom-constraint"}}} {
		t.Run(tc.method, func(t *testing.T) {
			out := filepath.Join(dir, tc.method)
			ctx := &countdownCtx{Context: context.Background()}
			ctx.n.Store(1) // the check before the search passes
			var so, se strings.Builder
			err := run(ctx, append([]string{"split", tc.method, "--in", in, "--out", out}, tc.extra...), &so, &se)
			if code := exitCode(err, &se); code != 1 || !errors.Is(err, context.Canceled) {
				t.Fatalf("exit %d: %v", code, err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s written: %v", out, err)
			}
		})
	}
}

// writeScores writes a score file for every record of pool.
func writeScores(t *testing.T, dir, pool string) string {
	t.Helper()
	recs, err := os.ReadFile(pool)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(recs)), "\n") {
		id := line[strings.Index(line, `"id":"`)+6:]
		id = id[:strings.Index(id, `"`)]
		b.WriteString(`{"id":"` + id + `","score":-` + strconv.Itoa(i%17) + "}\n")
	}
	return writeFile(t, dir, "scores.jsonl", b.String())
}

// TestCrashInputs: settings and split files that used to end in a panic
// or out of memory, or to compile for minutes deaf to signals, fail at
// once with one line and leave nothing behind.
func TestCrashInputs(t *testing.T) {
	old := machineMemory
	machineMemory = func() (float64, string) { return 4 << 30, "test" }
	defer func() { machineMemory = old }()
	dir := t.TempDir()
	good := filepath.Join("testdata", "train-tiny.jsonl")
	farIndex := writeFile(t, dir, "far.split.json", `{"trainIdxs": [0, 1], "testIdxs": [1000000000000000000]}`)
	out := func(name string) string { return filepath.Join(dir, "out-"+name) }
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"cfq import: an index of 1e18", []string{"cfq", "import", "--in", good, "--split", farIndex, "--out-dir", out("a")}, 1, "test index 1000000000000000000 is out of range"},
		// Batches are padded to --batch rows however few the records.
		{"train --batch 3000000 on 6 records", append([]string{"train", "--train", good, "--out", out("b")}, append(tinyTrain, "--batch", "3000000")...), 2, "mostly a training step's activations"},
		{"train --layers 1000", append([]string{"train", "--train", good, "--out", out("c")}, append(tinyTrain, "--layers", "1000")...), 2, "at most 64 each"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errs, code := runCLI(t, tc.args...)
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			if code != tc.code || !strings.Contains(lines[len(lines)-1], tc.want) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and a last line with %q", code, stdout, errs, tc.code, tc.want)
			}
			if ents, _ := filepath.Glob(filepath.Join(dir, "*", ".*tmp*")); len(ents) > 0 {
				t.Errorf("temporaries left: %v", ents)
			}
			if ents, _ := filepath.Glob(filepath.Join(dir, "out-*")); len(ents) > 0 {
				t.Errorf("outputs written: %v", ents)
			}
		})
	}
}
