package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/engine"
)

// TestUncheckedValues: values that used to pass unnoticed (records without
// text, NaN, out-of-range settings, a result.json of 700%, sweep cells
// that cannot run) are refused at once: exit status 2 for a usage error, 1
// for bad data, one line, nothing written (no output folder either, as
// after a split index past the last record).
func TestUncheckedValues(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("testdata", "train-tiny.jsonl")
	recs, _ := os.ReadFile(good)
	noInput := writeFile(t, dir, "noinput.jsonl", string(recs)+`{"id":"x","output":"JUMP"}`+"\n")
	nullOutput := writeFile(t, dir, "nulloutput.jsonl", `{"id":"y","input":"jump","output":null}`+"\n"+string(recs))
	pastEnd := writeFile(t, dir, "past.split.json", `{"trainIdxs": [0, 1], "testIdxs": [50]}`)
	maskConflict := writeFile(t, dir, "mask.json", `{"model": {"mask": "sep-full"}}`)
	badMask := writeFile(t, dir, "badmask.json", `{"model": {"mask": "bogus"}}`)
	run := trainedRun(t)
	sweepOut := filepath.Join(dir, "sweep-out")
	cell := filepath.Join(sweepOut, "cells", "d.transformer.seed1")
	os.MkdirAll(cell, 0o755)
	writeFile(t, sweepOut, "sweep.json", `{"models": ["transformer"], "datasets": [{"name": "d", "train": "x", "test": "y"}], "seeds": [1]}`)
	writeFile(t, cell, "result.json", `{"cell": {"name": "d.transformer.seed1"}, "steps": 2, "dev_em": -1, "test_em": 7}`)
	sweepFile := func(body string) string {
		return writeFile(t, t.TempDir(), "s.json", `{"models": ["transformer"], "tasks": ["length"], "seeds": [1], `+body+`}`)
	}
	out := func(name string) string { return filepath.Join(dir, "out-"+name) }
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"split: a record without input", []string{"split", "random", "--in", noInput, "--out", out("a"), "--tree", "none"}, 1, `noinput.jsonl: record 7 (id "x") has no "input"`},
		{"split: a null output", []string{"split", "random", "--in", nullOutput, "--out", out("b"), "--tree", "none"}, 1, `record 1 (id "y") has no "output"`},
		{"cfq import: a record without input", []string{"cfq", "import", "--in", noInput, "--format", "jsonl", "--out", out("c")}, 1, `record 7 (id "x") has no "input"`},
		{"cfq import: an index past the last record", []string{"cfq", "import", "--in", good, "--split", pastEnd, "--out-dir", filepath.Join(out("v"), "deeper")}, 1, "test index 50 is out of range: the data has 6 examples"},
		{"train --checkpoint-minutes NaN", append([]string{"train", "--train", good, "--out", out("e"), "--checkpoint-minutes", "NaN"}, tinyTrain...), 2, "--checkpoint-minutes NaN: want a finite number"},
		{"train --checkpoint-minutes 1e300", append([]string{"train", "--train", good, "--out", out("f"), "--checkpoint-minutes", "1e300"}, tinyTrain...), 2, "--checkpoint-minutes 1e+300: want 0 (off) to"},
		{"train --eval-every -1", append([]string{"train", "--train", good, "--out", out("g")}, append(tinyTrain, "--eval-every", "-1")...), 2, "--eval-every -1: want >= 0"},
		{"train: a config mask the model replaces", append([]string{"train", "--train", good, "--out", out("j"), "--model", "transformer", "--config", maskConflict}, tinyTrain...), 2, `mask "sep-full" conflicts with the model transformer`},
		{"train: a config mask that names none", append([]string{"train", "--train", good, "--out", out("k"), "--model", "sep-full", "--config", badMask}, tinyTrain...), 2, `unknown mask "bogus"`},
		{"predict --alpha NaN", []string{"predict", "--run", run, "--in", good, "--out", out("l"), "--alpha", "NaN"}, 2, "--alpha NaN: want a finite number"},
		{"agree --k 0", []string{"agree", "--gold", good, "--pred", good, "--pred", good, "--k", "0"}, 2, "--k 0: want between 1 and the number of models (2)"},
		{"gen --train-size 2e8", []string{"gen", "scan", "--train-size", "200000000", "--out", out("m")}, 2, "--train-size 200000000: at most"},
		{"report: test_em 7", []string{"report", sweepOut, "--out", out("n")}, 1, "result.json: test_em 7 outside [0, 1]"},
		{"sweep: generate.train_size -5", []string{"sweep", "--file", sweepFile(`"generate": {"train_size": -5}`), "--out", out("o"), "--local"}, 2, "generate.train_size -5"},
		{"sweep: generate.train_size 1e12", []string{"sweep", "--file", sweepFile(`"generate": {"train_size": 1000000000000}`), "--out", out("p"), "--local"}, 2, "generate.train_size 1000000000000"},
		{"sweep: model.dim 1e6", []string{"sweep", "--file", sweepFile(`"config": {"model": {"dim": 1000000, "heads": 8}}`), "--out", out("q"), "--local"}, 2, "mostly the weights"},
		{"sweep: a vary value of dim 2e6", []string{"sweep", "--file", sweepFile(`"vary": [{"key": "model.dim", "values": [64, 2000000]}]`), "--out", out("r"), "--local"}, 2, "cell length.transformer.model.dim=2000000.seed1: needs about"},
		{"sweep: beam 1e6", []string{"sweep", "--file", sweepFile(`"beam": 1000000`), "--out", out("s"), "--local"}, 2, "beam 1000000: want 0 (greedy) to"},
		{"sweep: a mask the model replaces", []string{"sweep", "--file", sweepFile(`"config": {"model": {"mask": "sep-full"}}`), "--out", out("t"), "--local"}, 2, `mask "sep-full" conflicts with the model transformer`},
	}
	if !engine.CUDABuilt {
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"sweep: device cuda on a CPU build", []string{"sweep", "--file", sweepFile(`"device": "cuda"`), "--out", out("u"), "--local"}, 2, "built without CUDA support"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, errs, code := runCLI(t, tc.args...)
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			if code != tc.code || !strings.Contains(lines[len(lines)-1], tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and a last line with %q", code, errs, tc.code, tc.want)
			}
			if tc.args[0] != "agree" && stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if ents, _ := filepath.Glob(filepath.Join(dir, "out-*")); len(ents) > 0 {
				t.Errorf("outputs written: %v", ents)
			}
			if ents, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(ents) > 0 {
				t.Errorf("temporaries left: %v", ents)
			}
		})
	}
}
