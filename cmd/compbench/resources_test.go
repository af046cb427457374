package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBoundedResourcesAndClearErrors feeds each command settings or records
// that used to end in Go's fatal out-of-memory, run for minutes, or pass
// unnoticed: each must fail at once with a clear one-line error naming the
// setting or the record, and write nothing.
func TestBoundedResourcesAndClearErrors(t *testing.T) {
	// The refusals must not depend on the machine running the test.
	old := machineMemory
	machineMemory = func() (float64, string) { return 16 << 30, "test" }
	defer func() { machineMemory = old }()

	dir := t.TempDir()
	good := filepath.Join("testdata", "train-tiny.jsonl")
	runDir := filepath.Join(dir, "run")
	if _, errs, code := runCLI(t, append([]string{"train", "--train", good, "--dev", good, "--out", runDir}, tinyTrain...)...); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	recs, _ := os.ReadFile(good)
	noInput := writeFile(t, dir, "noinput.jsonl", string(recs)+`{"id":"x","output":"JUMP"}`+"\n")
	noOutput := writeFile(t, dir, "nooutput.jsonl", string(recs)+`{"id":"x","input":"jump"}`+"\n")
	blankInput := writeFile(t, dir, "blank.jsonl", `{"id":"x","input":"  ","output":"JUMP"}`+"\n")
	longSrc := writeFile(t, dir, "longsrc.jsonl", string(recs)+`{"id":"x","input":"`+strings.Repeat("jump ", 100000)+`","output":"JUMP"}`+"\n")
	huge := writeFile(t, dir, "huge.jsonl", `{"id":"x","input":"`+strings.Repeat("jump twice ", 100000)+`","output":"JUMP"}`+"\n")
	longTgt := writeFile(t, dir, "longtgt.json", `{"model": {"max_tgt_len": 1000000000}}`)
	longSrcCfg := writeFile(t, dir, "longsrc.json", `{"model": {"max_src_len": 1000000000}}`)
	garbage := writeFile(t, dir, "garbage.json", `{"steps": 2} {"steps": 3}`)
	g := writeFile(t, dir, "g.txt", "s -> 'a' | 'b' | 'c'\n")

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"beam wider than the vocabulary", []string{"predict", "--run", runDir, "--in", good, "--out", filepath.Join(dir, "p1"), "--beam", "100000"},
			2, "--beam 100000 is wider than the"},
		{"decoding beyond memory", []string{"predict", "--run", runDir, "--in", good, "--out", filepath.Join(dir, "p2"), "--max-len", "1000000000"},
			2, "lower --beam, --batch or --max-len"},
		{"weights beyond memory", append([]string{"train", "--train", good, "--out", filepath.Join(dir, "r1")}, append(tinyTrain, "--dim", "1000000")...),
			2, "mostly the weights, gradients and Adam moments"},
		{"run: weights beyond memory", []string{"run", "--out", filepath.Join(dir, "x"), "--dim", "1000000", "--train-size", "20", "--dev-size", "5", "--test-size", "5"},
			2, "compbench run: needs about"},
		{"dev decoding beyond memory", append([]string{"train", "--train", good, "--dev", good, "--out", filepath.Join(dir, "r2"), "--config", longTgt}, tinyTrain[:8]...),
			2, "lower --max-tgt (max_tgt_len) or --batch (batch)"},
		{"activations beyond memory", append([]string{"train", "--train", longSrc, "--out", filepath.Join(dir, "r3"), "--config", longSrcCfg}, tinyTrain[:6]...),
			2, "lower --batch (batch), --max-src (max_src_len)"},
		{"config with data after the object", []string{"train", "--train", good, "--out", filepath.Join(dir, "r4"), "--config", garbage},
			1, "data after the JSON object"},
		{"train record without input", append([]string{"train", "--train", noInput, "--out", filepath.Join(dir, "r5")}, tinyTrain...),
			1, `noinput.jsonl: record 7 (id "x") has no "input"`},
		{"train record with a blank input", append([]string{"train", "--train", blankInput, "--out", filepath.Join(dir, "r6")}, tinyTrain...),
			1, `record 1 (id "x") has no "input"`},
		{"dev record without output", append([]string{"train", "--train", good, "--dev", noOutput, "--out", filepath.Join(dir, "r7")}, tinyTrain...),
			1, `nooutput.jsonl: record 7 (id "x") has no "output"`},
		{"finetune record without output", []string{"finetune", "--run", runDir, "--data", noOutput, "--out", filepath.Join(dir, "r8"), "--steps", "1"},
			1, `record 7 (id "x") has no "output"`},
		{"predict record without input", []string{"predict", "--run", runDir, "--in", noInput, "--out", filepath.Join(dir, "p3")},
			1, `record 7 (id "x") has no "input"`},
		{"score record without input", []string{"score", "--lm", scoreFixture, "--in", noInput, "--out", filepath.Join(dir, "s1")},
			1, `record 7 (id "x") has no "input"`},
		{"score record far beyond the context", []string{"score", "--lm", scoreFixture, "--in", huge, "--out", filepath.Join(dir, "s2")},
			1, `record "x": at least`},
		{"score negative folds", []string{"score", "--lm", scoreFixture, "--in", good, "--out", filepath.Join(dir, "s3"), "--folds", "-1"},
			2, "--folds -1"},
		{"split negative threshold", []string{"split", "length", "--in", good, "--out", filepath.Join(dir, "sp"), "--threshold", "-1", "--tree", "none"},
			2, "--threshold -1"},
		{"dedupe on a finite language", []string{"gen", "scfg", "--grammar", g, "--out", filepath.Join(dir, "g.jsonl"), "--dedupe", "--n", "1000000"},
			1, "found only 3 distinct examples (asked for 1000000): 1030 draws in a row brought no new one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dir)
			// Each refusal comes at once; the old code ran for minutes here.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out, errb bytes.Buffer
			code := exitCode(run(ctx, tc.args, &out, &errb), &errb)
			errs := errb.String()
			if i := strings.LastIndex(strings.TrimSuffix(errs, "\n"), "\n"); i >= 0 {
				errs = errs[i+1:] // the error line, after any progress
			}
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, errs, tc.code, tc.want)
			}
			if after := snapshot(t, dir); len(after) != len(before) {
				t.Errorf("%d files before, %d after", len(before), len(after))
			}
		})
	}

	t.Run("predict without outputs", func(t *testing.T) {
		in := writeFile(t, dir, "unlabelled.jsonl", `{"id":"x","input":"jump"}`+"\n")
		out, errs, code := runCLI(t, "predict", "--run", runDir, "--in", in, "--out", filepath.Join(dir, "p4"))
		if code != 0 || !strings.Contains(out, "no exact match: 1 of 1 records have no output") {
			t.Errorf("exit %d: %s%s", code, out, errs)
		}
	})
	t.Run("beam as wide as the vocabulary", func(t *testing.T) {
		_, errs, code := runCLI(t, "predict", "--run", runDir, "--in", good, "--out", filepath.Join(dir, "p5"), "--beam", "100000")
		_, most, _ := strings.Cut(errs, "use at most ")
		var n int
		if _, err := fmt.Sscanf(most, "%d", &n); code != 2 || err != nil || n < 2 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if _, errs, code := runCLI(t, "predict", "--run", runDir, "--in", good, "--out", filepath.Join(dir, "p6"), "--beam", strconv.Itoa(n)); code != 0 {
			t.Errorf("--beam %d: exit %d: %s", n, code, errs)
		}
	})
}
