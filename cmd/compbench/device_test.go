package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"compbench/engine"
	"compbench/safetensors"
)

// deviceTiny is a tiny Transformer run with dropout and label smoothing,
// so the engine path's dropout masks and smoothed loss are exercised.
var deviceTiny = []string{"--model", "relative", "--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32",
	"--max-src", "8", "--max-tgt", "10", "--batch", "4", "--bucket-width", "4", "--lr", "1e-2", "--warmup", "5",
	"--dropout", "0.1", "--label-smoothing", "0.1", "--clip", "1"}

// devTol is the relative tolerance between the TapeMachine and the engine
// on the CPU backend, two implementations whose FP32 arithmetic differs
// only in summation order (crossTol), for the tests' tiny Transformer and
// GPT-2 runs: batch 4, max_tgt 10, mlp 32 (sums of at most 4·10·32 =
// 1,280 terms), at most 20 optimizer steps (score's k-fold fine-tuning).
// Decoding scores may differ in the last bits too, the engine re-running
// prefixes.
var devTol = crossTol(1280, 20)

func trainArgs(dataPath, out, dev string, steps string, extra ...string) []string {
	a := append([]string{"train", "--train", dataPath, "--dev", dataPath, "--out", out, "--steps", steps, "--eval-every", "5", "--device", dev}, deviceTiny...)
	return append(a, extra...)
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errs)
	}
	return errs
}

// readJSONLMaps reads a JSONL file into maps, dropping the keys in skip
// and a metrics line's clock ("wall"), which differs between any two runs.
func readJSONLMaps(t *testing.T, path string, skip ...string) []map[string]any {
	t.Helper()
	skip = append(skip, "wall")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, k := range skip {
			delete(m, k)
		}
		rows = append(rows, m)
	}
	return rows
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
}

// sameJSONL compares two JSONL files field by field: strings exactly,
// numbers within devTol relative.
func sameJSONL(t *testing.T, want, got string, skip ...string) {
	t.Helper()
	sameRows(t, got, readJSONLMaps(t, want, skip...), readJSONLMaps(t, got, skip...))
}

func sameRows(t *testing.T, got string, w, g []map[string]any) {
	t.Helper()
	sameRowsTol(t, got, w, g, devTol)
}

// sameRowsTol is sameRows with numbers compared within tol, relative.
func sameRowsTol(t *testing.T, got string, w, g []map[string]any, tol float64) {
	t.Helper()
	if len(w) != len(g) || len(w) == 0 {
		t.Fatalf("%s: %d lines, want %d", got, len(g), len(w))
	}
	for i := range w {
		if len(w[i]) != len(g[i]) {
			t.Fatalf("line %d: %v vs %v", i+1, w[i], g[i])
		}
		for k, wv := range w[i] {
			gv := g[i][k]
			wf, wok := wv.(float64)
			gf, gok := gv.(float64)
			switch {
			case wok && gok:
				if !near(wf, gf, tol) {
					t.Errorf("%s line %d %s: %v, want %v", got, i+1, k, gf, wf)
				}
			default:
				wb, _ := json.Marshal(wv)
				gb, _ := json.Marshal(gv)
				if string(wb) != string(gb) {
					t.Errorf("%s line %d %s: %s, want %s", got, i+1, k, gb, wb)
				}
			}
		}
	}
}

// devLines keeps the dev evaluation lines of the steps that are multiples of 5.
func devLines(rows []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range rows {
		if s, _ := r["step"].(float64); r["dev_em"] != nil && int(s)%5 == 0 {
			out = append(out, r)
		}
	}
	return out
}

// sameWeights compares every tensor of two safetensors files, except those
// whose names end in one of skip, within tol relative to the tensor's
// largest magnitude.
func sameWeights(t *testing.T, want, got string, tol float64, skip ...string) {
	t.Helper()
	w, err := safetensors.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := safetensors.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(w.Names(), ",") != strings.Join(g.Names(), ",") {
		t.Fatalf("%s and %s hold different tensors", want, got)
	}
	for _, name := range w.Names() {
		if slices.ContainsFunc(skip, func(suffix string) bool { return strings.HasSuffix(name, suffix) }) {
			continue
		}
		wt, _ := w.Get(name)
		gt, _ := g.Get(name)
		wv, err1 := wt.Float32s()
		gv, err2 := gt.Float32s()
		if err1 != nil || err2 != nil || len(wv) != len(gv) {
			t.Fatalf("%s: %v %v, %d vs %d values", name, err1, err2, len(wv), len(gv))
		}
		scale := 0.0
		for _, x := range wv {
			scale = max(scale, math.Abs(float64(x)))
		}
		for k := range wv {
			if math.Abs(float64(wv[k]-gv[k])) > tol*max(scale, 1e-3) {
				t.Fatalf("%s: %s[%d] = %v, want %v", got, name, k, gv[k], wv[k])
			}
		}
	}
}

// TestDeviceCPU runs train, resume, predict and finetune on --device cpu,
// the executor --device cuda runs, with the CPU's kernels: a resumed run
// is the uninterrupted one bit for bit, and every command names the
// backend. The executor's arithmetic is checked against Gorgonia's
// TapeMachine in package engine and models; the GPU's kernels against
// the CPU's in TestDeviceCUDAEmulated.
func TestDeviceCPU(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	cpu := filepath.Join(dir, "cpu")
	errs := mustRun(t, trainArgs(data, cpu, "cpu", "12")...)
	if !strings.Contains(errs, "engine executor on cpu") {
		t.Errorf("progress does not name the backend:\n%s", errs)
	}

	t.Run("resume", func(t *testing.T) {
		// 7 steps, then resume to 12: the checkpoint must carry the
		// backend's weights and Adam state. The training-loss lines
		// average over different steps; the dev lines must agree.
		run := filepath.Join(t.TempDir(), "r")
		mustRun(t, trainArgs(data, run, "cpu", "7")...)
		mustRun(t, trainArgs(data, run, "cpu", "12", "--resume")...)
		p := filepath.Join(run, "metrics.jsonl")
		sameRowsTol(t, p, devLines(readJSONLMaps(t, filepath.Join(cpu, "metrics.jsonl"))), devLines(readJSONLMaps(t, p)), 0)
		for _, f := range []string{"model.safetensors", "optim.safetensors"} {
			sameWeights(t, filepath.Join(cpu, f), filepath.Join(run, f), 0)
		}
	})

	t.Run("predict", func(t *testing.T) {
		for _, beam := range []string{"1", "3"} {
			got := filepath.Join(dir, "p-"+beam)
			if errs := mustRun(t, "predict", "--run", cpu, "--in", data, "--out", got, "--beam", beam); !strings.Contains(errs, "engine executor on cpu") {
				t.Errorf("stderr does not name the backend:\n%s", errs)
			}
			if n := len(readJSONLMaps(t, got)); n == 0 {
				t.Errorf("beam %s: no predictions", beam)
			}
		}
	})

	t.Run("finetune", func(t *testing.T) {
		a, b := filepath.Join(dir, "ft-a"), filepath.Join(dir, "ft-b")
		mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", a)
		mustRun(t, "finetune", "--run", cpu, "--data", data, "--steps", "3", "--out", b, "--device", "cpu")
		sameJSONL(t, filepath.Join(a, "metrics.jsonl"), filepath.Join(b, "metrics.jsonl"), "tokens_per_s")
		sameWeights(t, filepath.Join(a, "model.safetensors"), filepath.Join(b, "model.safetensors"), 0)
	})
}

// TestDeviceRefused checks the usage errors: a bad --device and cuda in a
// binary without GPU support. None leaves a run folder behind.
func TestDeviceRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	lstm := filepath.Join(dir, "lstm")
	mustRun(t, "train", "--model", "lstm-attention", "--train", data, "--out", lstm, "--steps", "2", "--dim", "8", "--layers", "1",
		"--max-src", "8", "--max-tgt", "10", "--batch", "4", "--bucket-width", "4")
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"train bad device", []string{"train", "--train", data, "--out", out, "--device", "tpu"}, "want cpu, cuda or cuda:N"},
		{"train bad ordinal", []string{"train", "--train", data, "--out", out, "--device", "cuda:x"}, "cuda:N"},
		{"predict bad device", []string{"predict", "--run", lstm, "--in", data, "--out", out, "--device", "gpu"}, "want cpu"},
		{"engine-cpu renamed", []string{"train", "--train", data, "--out", out, "--device", "engine-cpu"}, "is now --device cpu"},
	}
	if !engine.CUDABuilt {
		for _, cmd := range [][]string{
			{"train", "--train", data, "--out", out},
			{"predict", "--run", lstm, "--in", data, "--out", out},
			{"finetune", "--run", lstm, "--data", data, "--out", out},
		} {
			cases = append(cases, struct {
				name string
				args []string
				want string
			}{cmd[0] + " cuda without gpu build", append(cmd, "--device", "cuda:1"), "-tags gpu"})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused command left %s", out)
			}
		})
	}
}

// TestDeviceScore checks score --device cpu names the backend and refuses
// a bad device; the scores themselves are checked against the
// TapeMachine in package models.
func TestDeviceScore(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","input":"jump twice","output":"JUMP JUMP"}`+"\n"+
		`{"id":"b","input":"walk","output":"WALK"}`+"\n"+`{"id":"c","input":"look left thrice","output":"LTURN LOOK"}`+"\n"), 0o644)
	got := filepath.Join(dir, "engine.jsonl")
	errs := mustRun(t, "score", "--lm", scoreFixture, "--in", in, "--out", got, "--per-token", "--batch", "2", "--device", "cpu")
	if !strings.Contains(errs, "engine executor on cpu") {
		t.Errorf("stderr does not name the backend:\n%s", errs)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bad device", []string{"--device", "cuda:-1"}, "cuda:N"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "refused.jsonl")
			_, errs, code := runCLI(t, append([]string{"score", "--lm", scoreFixture, "--in", in, "--out", out}, c.args...)...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused command left %s", out)
			}
		})
	}
}
