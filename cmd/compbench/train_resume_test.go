package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTrainResumeChecks: what train --resume refuses, with the exit status
// and message a user sees, and that a refusal leaves the run folder as it
// was.
func TestTrainResumeChecks(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join("testdata", "train-tiny.jsonl")
	other := filepath.Join(dir, "other.jsonl")
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(other, append(b, []byte(`{"id":"7","input":"look","output":"LOOK"}`+"\n")...), 0o644)
	tiny := []string{"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--batch", "4", "--eval-every", "2"}
	// edit replaces the matches of pattern in the run's file name; an
	// empty repl swaps "JUMP" and "RUN". (An edit that matched nothing
	// shows as a resume accepted.)
	edit := func(name, pattern, repl string) func(run string) {
		return func(run string) {
			p := filepath.Join(run, name)
			b, _ := os.ReadFile(p)
			out := regexp.MustCompile(pattern).ReplaceAllStringFunc(string(b), func(m string) string {
				switch {
				case repl != "":
					return repl
				case m == `"JUMP"`:
					return `"RUN"`
				}
				return `"JUMP"`
			})
			os.WriteFile(p, []byte(out), 0o644)
		}
	}
	cases := []struct {
		name      string
		corrupt   func(run string) // breaks the stopped run before resuming
		args      []string         // after train --out RUN
		code      int
		want      string
		unchanged bool // the run folder must be left as it was
	}{
		{"steps 0", nil, []string{"--train", data, "--steps", "0"}, 2, "--steps 0", true},
		{"steps 0 on resume", nil, []string{"--train", data, "--steps", "0", "--resume"}, 2, "--steps 0", true},
		{"same data", nil, []string{"--train", data, "--steps", "6", "--resume"}, 0, "", false},
		{"other data", nil, []string{"--train", other, "--steps", "6", "--resume"}, 1, "--allow-data-change", true},
		{"dev added", nil, []string{"--train", data, "--dev", data, "--steps", "6", "--resume"}, 1, "--dev " + data + " is given", true},
		{"same lr", nil, []string{"--train", data, "--steps", "6", "--lr", "1e-3", "--resume"}, 0, "", false},
		{"other lr", nil, []string{"--train", data, "--steps", "6", "--lr", "0.02", "--resume"}, 2, "--lr 0.02 differs from the run's lr 0.001 (" + dir, true},
		{"other dim", nil, []string{"--train", data, "--steps", "6", "--dim", "32", "--resume"}, 2, "--dim 32 differs from the run's model.dim 16", true},
		{"other model", nil, []string{"--train", data, "--model", "relative", "--steps", "6", "--resume"}, 2, "--model relative differs from the run's model transformer", true},
		{"other seed", nil, []string{"--train", data, "--steps", "6", "--seed", "4", "--resume"}, 2, "--seed 4 differs from the run's seed 1", true},
		{"preset", nil, []string{"--train", data, "--steps", "6", "--preset", "cpu-small", "--resume"}, 2, "--preset cpu-small differs from the run's preset none", true},
		{"config", nil, []string{"--train", data, "--steps", "6", "--config", data, "--resume"}, 2, "--config starts a new run", true},
		{"other data allowed", nil, []string{"--train", other, "--steps", "6", "--resume", "--allow-data-change"}, 0, "warning: the data changed", false},
		{"negative step", func(run string) {
			os.WriteFile(filepath.Join(run, "state.json"), []byte(`{"step": -3, "adam_t": 0, "best_step": 0, "best_em": 0, "best_loss": 0}`), 0o644)
		}, []string{"--train", data, "--steps", "6", "--resume"}, 1, "state.json: step -3 < 0", true},
		{"corrupt config", func(run string) {
			p := filepath.Join(run, "config.json")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"layers": 1`, `"layers": -1`, 1)), 0o644)
		}, []string{"--train", data, "--steps", "6", "--resume"}, 1, "config.json: model: layers -1 < 1", true},
		// Hand edits that every other check lets through: the digests
		// the checkpoint recorded refuse them, naming the file.
		{"config.json lr edited", edit("config.json", `"lr": [0-9.e-]+`, `"lr": 0.02`), []string{"--train", data, "--steps", "6", "--resume"},
			1, "config.json changed since the checkpoint of step 4", true},
		{"config.json seed edited", edit("config.json", `"seed": 1`, `"seed": 2`), []string{"--train", data, "--steps", "6", "--resume"},
			1, "config.json changed since the checkpoint of step 4", true},
		{"config.json max_tgt_len edited", edit("config.json", `"max_tgt_len": \d+`, `"max_tgt_len": 12`), []string{"--train", data, "--steps", "6", "--resume"},
			1, "config.json changed since the checkpoint of step 4", true},
		{"vocab.json tokens swapped", edit("vocab.json", `"(JUMP|RUN)"`, ""), []string{"--train", data, "--steps", "6", "--resume"},
			1, "vocab.json changed since the checkpoint of step 4", true},
		{"state.json adam_t edited", edit("state.json", `"adam_t": 4`, `"adam_t": 3`), []string{"--train", data, "--steps", "6", "--resume"},
			1, "state.json changed since the checkpoint of step 4", true},
		{"state.json best_em edited", edit("state.json", `"best_em": 0,`, `"best_em": 0.5,`), []string{"--train", data, "--steps", "6", "--resume"},
			1, "state.json changed since the checkpoint of step 4", true},
		{"data.json missing", func(run string) { os.Remove(filepath.Join(run, "data.json")) }, []string{"--train", data, "--steps", "6", "--resume"},
			1, "data.json is missing, so the data cannot be checked: put it back, or pass --allow-data-change", true},
		{"data.json missing allowed", func(run string) { os.Remove(filepath.Join(run, "data.json")) }, []string{"--train", other, "--steps", "6", "--resume", "--allow-data-change"},
			0, "data.json is missing: the data given is recorded in a new one", false},
		{"inconsistent", func(run string) {
			// A valid state of step 2 beside the step-4 weights.
			os.WriteFile(filepath.Join(run, "state.json"), []byte(`{"step": 2, "adam_t": 2, "best_step": 2, "best_em": 0, "best_loss": 0}`), 0o644)
		}, []string{"--train", data, "--steps", "6", "--resume"}, 1, "compbench: inconsistent checkpoint: ", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := filepath.Join(dir, "run"+string(rune('a'+i)))
			if _, errs, code := runCLI(t, append([]string{"train", "--train", data, "--out", run, "--steps", "4"}, tiny...)...); code != 0 {
				t.Fatalf("first run: exit %d: %s", code, errs)
			}
			if c.corrupt != nil {
				c.corrupt(run)
			}
			before := folderBytes(t, run)
			_, errs, code := runCLI(t, append(append([]string{"train", "--out", run}, tiny...), c.args...)...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
			if c.unchanged && folderBytes(t, run) != before {
				t.Errorf("a refused resume changed the run folder")
			}
			if c.code == 0 {
				// --steps 6 over the run's 4: written back and logged.
				m, _ := os.ReadFile(filepath.Join(run, "metrics.jsonl"))
				cfg, _ := os.ReadFile(filepath.Join(run, "config.json"))
				if !strings.Contains(string(m), `{"resumed":{"steps":{"from":4,"to":6}},"step":4}`) || !strings.Contains(string(cfg), `"steps": 6`) {
					t.Errorf("the change of --steps is not recorded:\n%s\n%s", m, cfg)
				}
			}
		})
	}
}

// folderBytes lists a folder's file names and contents.
func folderBytes(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		c, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		b.WriteString(e.Name() + "\n" + string(c) + "\n")
	}
	return b.String()
}
