package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"compbench/data"
	"compbench/progress"
)

// TestResumeChanges: a resume may change only ResumableKeys; those are
// written back to config.json and logged as one "resumed" line; any other
// change is refused naming the key and both values, leaving the folder as
// it was.
func TestResumeChanges(t *testing.T) {
	cases := []struct {
		name    string
		change  func(c *Config)
		wantErr string // "" : accepted
		resumed string // the metrics line an accepted change adds
	}{
		{"nothing", func(c *Config) {}, "", ""},
		{"steps", func(c *Config) { c.Steps = 6 }, "", `{"resumed":{"steps":{"from":4,"to":6}},"step":4}`},
		{"eval every and limit", func(c *Config) { c.Steps, c.EvalEvery, c.EvalLimit = 6, 3, 5 },
			"", `{"resumed":{"eval_every":{"from":2,"to":3},"eval_limit":{"from":1000,"to":5},"steps":{"from":4,"to":6}},"step":4}`},
		{"lr", func(c *Config) { c.Steps, c.LR = 6, 0.02 }, "lr is 0.01 in ", ""},
		{"dim", func(c *Config) { c.Steps, c.Model.Dim = 6, 32 }, "model.dim is 16 in ", ""},
		{"seed", func(c *Config) { c.Steps, c.Seed = 6, 9 }, "seed is 1 in ", ""},
		{"preset", func(c *Config) { c.Steps, c.Preset = 6, "cpu-small" }, "preset is none in ", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, dir := stoppedRun(t)
			c.change(&cfg)
			before := snapshot(t, dir)
			_, err := Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Dev: tinyData(), Resume: true, LogEvery: 10})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v; want %q", err, c.wantErr)
				}
				sameSnapshot(t, before, snapshot(t, dir))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m, _ := os.ReadFile(filepath.Join(dir, MetricsFile))
			if got := strings.Contains(string(m), `"resumed"`); got != (c.resumed != "") || !strings.Contains(string(m), c.resumed) {
				t.Errorf("metrics.jsonl:\n%s\nwant the line %s", m, c.resumed)
			}
			var saved Config
			if err := readJSONStrict(filepath.Join(dir, ConfigFile), &saved); err != nil {
				t.Fatal(err)
			}
			if saved.Steps != cfg.Steps || saved.EvalEvery != cfg.EvalEvery || saved.EvalLimit != cfg.EvalLimit {
				t.Errorf("config.json has steps %d, eval_every %d, eval_limit %d; want %d, %d, %d",
					saved.Steps, saved.EvalEvery, saved.EvalLimit, cfg.Steps, cfg.EvalEvery, cfg.EvalLimit)
			}
		})
	}
}

// TestNoDevNoBest: without a dev set no step is evaluated, so state.json
// names no best step and there is no best.safetensors (predict and
// finetune then use the latest weights).
func TestNoDevNoBest(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 4, 2
	dir := t.TempDir()
	r := train(t, cfg, Options{Dir: dir, Train: tinyData()})
	var st State
	if err := readJSONStrict(filepath.Join(dir, StateFile), &st); err != nil {
		t.Fatal(err)
	}
	if st.BestStep != 0 || r.BestStep != 0 || data.Exists(filepath.Join(dir, BestFile)) {
		t.Errorf("best_step %d (result %d), best.safetensors exists: %v; want none", st.BestStep, r.BestStep, data.Exists(filepath.Join(dir, BestFile)))
	}
	run, err := OpenRun(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if run.WeightsPath() != filepath.Join(dir, ModelFile) {
		t.Errorf("OpenRun loaded %s", run.WeightsPath())
	}
}

// TestStopInEvaluation: a stop inside a dev evaluation checkpoints that
// step with its evaluation pending; the resume evaluates it first and ends
// with the uninterrupted run's files and metrics.
func TestStopInEvaluation(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 40, 20
	full, part := t.TempDir(), t.TempDir()
	train(t, cfg, Options{Dir: full})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evalHook = func(step int) {
		if step == 20 {
			cancel()
		}
	}
	_, err := Train(ctx, cfg, Options{Dir: part, Train: tinyData(), Dev: tinyData(), LogEvery: 10})
	evalHook = nil
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted at step 20 (dev evaluation)") {
		t.Fatalf("error %v", err)
	}
	var st State
	if err := readJSONStrict(filepath.Join(part, StateFile), &st); err != nil {
		t.Fatal(err)
	}
	if st.Step != 20 || !st.EvalPending {
		t.Fatalf("state %+v; want step 20 with its evaluation pending", st)
	}
	train(t, cfg, Options{Dir: part, Resume: true})
	for _, f := range []string{ModelFile, OptimFile, BestFile, StateFile} {
		sameFile(t, filepath.Join(full, f), filepath.Join(part, f))
	}
	if a, b := metricsOf(t, full), metricsOf(t, part); a != b {
		t.Errorf("metrics differ:\n%s\n---\n%s", a, b)
	}
}

// TestWarmupWarning: a warmup as long as the run or longer is named on
// stderr with both values; a shorter one, or none, is not.
func TestWarmupWarning(t *testing.T) {
	cases := []struct {
		name          string
		warmup, steps int
		want          string
	}{
		{"longer", 16, 4, "warning: warmup 16 >= steps 4: the learning rate never reaches its peak 0.01"},
		{"equal", 4, 4, "warning: warmup 4 >= steps 4"},
		{"shorter", 3, 4, ""},
		{"constant", 0, 4, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.Warmup = c.steps, c.warmup
			var errs bytes.Buffer
			train(t, cfg, Options{Dir: t.TempDir(), Progress: progress.To(&errs)})
			if got := strings.Contains(errs.String(), "warning: warmup"); got != (c.want != "") || !strings.Contains(errs.String(), c.want) {
				t.Errorf("stderr %q; want %q", errs.String(), c.want)
			}
		})
	}
}

// TestTrainProgress: the progress line names the device, estimates the
// time to finish from step 20 (not before), and the dev evaluation counts
// the examples it decodes.
func TestTrainProgress(t *testing.T) {
	progressInterval = 0
	defer func() { progressInterval = -1 }()
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 30, 0
	var errs bytes.Buffer
	train(t, cfg, Options{Dir: t.TempDir(), Progress: progress.To(&errs)})
	out := errs.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^train on cpu: 20/30 \(67%\) \S+ ETA \S+`),
		regexp.MustCompile(`(?m)^train on cpu: 30/30 \(100%\) .*dev evaluation at step 30: decoded 6/6`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no line matching %s in\n%s", want, out)
		}
	}
	if regexp.MustCompile(`(?m)^train on cpu: 1?[0-9]/30 .*ETA`).MatchString(out) {
		t.Errorf("an estimate before step 20:\n%s", out)
	}
}

// TestStopBeforeFirstStep: a stop before any step writes no checkpoint and
// says the resume starts again.
func TestStopBeforeFirstStep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	_, err := Train(ctx, tinyConfig("transformer"), Options{Dir: dir, Train: tinyData()})
	if err == nil || !strings.Contains(err.Error(), "interrupted at step 1, before any checkpoint") {
		t.Fatalf("error %v", err)
	}
	if data.Exists(filepath.Join(dir, StateFile)) {
		t.Errorf("a checkpoint was written")
	}
}
