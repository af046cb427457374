package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"compbench/train"
)

// TestTrainPresets: --preset sets size, schedule and batch per model
// family, --config and flags override it, config.json records its name,
// an unknown name is a usage error listing the known ones, and --help
// lists them.
func TestTrainPresets(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cfg.json")
	os.WriteFile(cfgFile, []byte(`{"steps": 7}`), 0o644)
	cases := []struct {
		name                       string
		args                       []string
		layers, dim, batch, warmup int
		steps                      int
		lr, dropout                float64
		preset, schedule           string
	}{
		{"none", nil, 3, 256, 64, 16000, 10000, 1e-3, 0.1, "", ""},
		{"paper", []string{"--preset", "paper"}, 3, 256, 64, 16000, 10000, 1e-3, 0.1, "paper", ""},
		{"cpu-small", []string{"--preset", "cpu-small"}, 2, 64, 64, 200, 2000, 5e-3, 0, "cpu-small", "polynomial"},
		{"cpu-small relative", []string{"--preset", "cpu-small", "--model", "relative"}, 2, 64, 64, 200, 2000, 5e-3, 0, "cpu-small", "polynomial"},
		{"cpu-small lstm", []string{"--preset", "cpu-small", "--model", "lstm-attention"}, 1, 64, 64, 0, 3500, 0.01, 0, "cpu-small", "polynomial"},
		{"flags override", []string{"--preset", "cpu-small", "--dim", "32", "--steps", "100"}, 2, 32, 64, 200, 100, 5e-3, 0, "cpu-small", "polynomial"},
		{"config overrides", []string{"--preset", "cpu-small", "--config", cfgFile}, 2, 64, 64, 200, 7, 5e-3, 0, "cpu-small", "polynomial"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := flagsConfig(t, dir, c.args)
			m := cfg.Model
			if m.Layers != c.layers || m.Dim != c.dim || cfg.Batch != c.batch || cfg.Warmup != c.warmup || cfg.Steps != c.steps ||
				cfg.LR != c.lr || m.Dropout != c.dropout || cfg.Preset != c.preset || cfg.Schedule != c.schedule {
				t.Errorf("layers %d dim %d batch %d warmup %d steps %d lr %g dropout %g preset %q schedule %q; want %d %d %d %d %d %g %g %q %q",
					m.Layers, m.Dim, cfg.Batch, cfg.Warmup, cfg.Steps, cfg.LR, m.Dropout, cfg.Preset, cfg.Schedule,
					c.layers, c.dim, c.batch, c.warmup, c.steps, c.lr, c.dropout, c.preset, c.schedule)
			}
		})
	}
	data := filepath.Join("testdata", "train-tiny.jsonl")
	t.Run("recorded", func(t *testing.T) {
		run := filepath.Join(dir, "run")
		if _, errs, code := runCLI(t, "train", "--preset", "cpu-small", "--train", data, "--out", run, "--steps", "2", "--warmup", "1"); code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var cfg train.Config
		if cfg, err := train.LoadConfig(filepath.Join(run, "config.json"), cfg); err != nil || cfg.Preset != "cpu-small" {
			t.Errorf("config.json: preset %q, %v", cfg.Preset, err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		_, errs, code := runCLI(t, "train", "--preset", "gpu-huge", "--train", data, "--out", filepath.Join(dir, "u"))
		if code != 2 || !strings.Contains(errs, `unknown preset "gpu-huge" (known: cpu-small, paper)`) {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
	t.Run("help", func(t *testing.T) {
		out, _, code := runCLI(t, "train", "--help")
		for _, want := range []string{"  --preset NAME", "  cpu-small: ", "  paper: ", "batch 64, lr 0.005 (polynomial), warmup 200, 2000 steps"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("exit %d, help lacks %q:\n%s", code, want, out)
			}
		}
	})
}

// TestTrainWarmupWarning: train names a warmup that outlasts the run, and
// what to do, on one stderr line.
func TestTrainWarmupWarning(t *testing.T) {
	data := filepath.Join("testdata", "train-tiny.jsonl")
	tiny := []string{"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--batch", "4", "--train", data}
	cases := []struct {
		name, steps, warmup string
		want                bool
	}{
		{"default warmup", "3", "", true},
		{"longer", "3", "5", true},
		{"shorter", "3", "2", false},
		{"constant", "3", "0", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"train", "--out", filepath.Join(t.TempDir(), "run"), "--steps", c.steps}, tiny...)
			if c.warmup != "" {
				args = append(args, "--warmup", c.warmup)
			}
			_, errs, code := runCLI(t, args...)
			line := "warning: warmup " + c.warmup
			if c.warmup == "" {
				line = "warning: warmup 16000 >= steps 3:"
			}
			if code != 0 || strings.Contains(errs, line) != c.want || strings.Contains(errs, "warning: warmup") != c.want {
				t.Errorf("exit %d, stderr %q; want a warning: %v", code, errs, c.want)
			}
			if c.want && !strings.Contains(errs, "set --warmup below --steps") {
				t.Errorf("the warning says nothing to do: %q", errs)
			}
		})
	}
}

// TestTrainCheckpointMinutes: --checkpoint-minutes checkpoints on time
// between the --eval-every ones (here there are none before the end), so
// a run killed with SIGKILL resumes from there; a negative value is a
// usage error.
func TestTrainCheckpointMinutes(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	args := append(killArgs(t, run), "--steps", "100000", "--eval-every", "0", "--checkpoint-minutes", "0.0005") // 30 ms
	cmd, stderr := cliCommand(args, 0)
	cmd.Env = append(cmd.Env, "COMPBENCH_TEST_STEP_PAUSE=5ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(run, "state.json")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(state); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no time-based checkpoint in 20 s: %s", stderr)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("%v", err)
	}
	var st train.State
	b, err := os.ReadFile(state)
	if err != nil || json.Unmarshal(b, &st) != nil || st.Step < 1 {
		t.Fatalf("state.json %s (%v)", b, err)
	}
	resume := append(killArgs(t, run), "--steps", strconv.Itoa(st.Step+2), "--eval-every", "0", "--resume")
	if _, errs, code := runCLI(t, resume...); code != 0 {
		t.Fatalf("resume from the step-%d checkpoint: exit %d: %s", st.Step, code, errs)
	}
	t.Run("negative", func(t *testing.T) {
		_, errs, code := runCLI(t, append(killArgs(t, filepath.Join(t.TempDir(), "r")), "--checkpoint-minutes", "-1")...)
		if code != 2 || !strings.Contains(errs, "--checkpoint-minutes -1") {
			t.Errorf("exit %d, stderr %q", code, errs)
		}
	})
}

// flagsConfig is the config train's flags (args) give for a new run in dir.
func flagsConfig(t *testing.T, dir string, args []string) train.Config {
	t.Helper()
	var tf trainFlags
	fs := newFlags("train", "", "", io.Discard)
	tf.register(fs)
	tf.registerTrain(fs)
	if _, err := parseFlags(fs, args); err != nil {
		t.Fatal(err)
	}
	cfg, err := tf.baseConfig(fs, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestConfigFlags: every config flag is registered and names a config.json
// key its value type fits, and every registered model or optimisation
// flag other than --model and --config is in the table (a new flag is not silently
// ignored).
func TestConfigFlags(t *testing.T) {
	fs := newFlags("train", "", "", io.Discard)
	var tf trainFlags
	tf.register(fs)
	for name, key := range configFlags {
		t.Run(name, func(t *testing.T) {
			fl := fs.Lookup(name)
			if fl == nil {
				t.Fatalf("--%s is not registered", name)
			}
			cfg := train.DefaultConfig()
			if err := cfg.SetKey(key, fl.Value.(flag.Getter).Get()); err != nil {
				t.Errorf("--%s: %v", name, err)
			}
		})
	}
	fs.VisitAll(func(fl *flag.Flag) {
		if _, ok := configFlags[fl.Name]; !ok && fl.Name != "model" && fl.Name != "config" {
			t.Errorf("--%s is registered by trainFlags.register but sets no config key", fl.Name)
		}
	})
}
