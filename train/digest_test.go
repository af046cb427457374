package train

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/models"
	"compbench/progress"
	"compbench/safetensors"
)

// editJSON decodes dir/name into v, lets edit change it and writes it back
// as compbench would (indented).
func editJSON[T any](t *testing.T, dir, name string, edit func(v *T)) {
	t.Helper()
	p := filepath.Join(dir, name)
	var v T
	if err := readJSONStrict(p, &v); err != nil {
		t.Fatal(err)
	}
	edit(&v)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRefusesEdits: a run file edited by hand after its checkpoint
// (within range, so every other check passes) is refused by its digest,
// naming the file and leaving the folder as it was; a change a flag could
// make, a missing data.json with --allow-data-change, and a checkpoint
// from before digests are accepted, the last two with a warning.
func TestResumeRefusesEdits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	var fps []DataFile
	for role, p := range map[string]string{"train": write("a.jsonl", "one"), "dev": write("b.jsonl", "two")} {
		f, err := Fingerprint(role, p)
		if err != nil {
			t.Fatal(err)
		}
		fps = append(fps, f)
	}
	cases := []struct {
		name  string
		edit  func(t *testing.T, run string)
		allow bool
		file  string // the file the refusal names; "": accepted
		want  string // in the error, or in the warnings when accepted
	}{
		{"config lr", func(t *testing.T, run string) {
			editJSON(t, run, ConfigFile, func(c *Config) { c.LR = 0.02 })
		}, false, ConfigFile, "changed since the checkpoint of step 4"},
		{"config seed", func(t *testing.T, run string) {
			editJSON(t, run, ConfigFile, func(c *Config) { c.Seed = 2 })
		}, false, ConfigFile, "--steps, --eval-every, --eval-limit"},
		{"config max_tgt_len", func(t *testing.T, run string) {
			editJSON(t, run, ConfigFile, func(c *Config) { c.Model.MaxTgtLen = 9 })
		}, false, ConfigFile, "changed since the checkpoint"},
		{"config steps, as --steps would", func(t *testing.T, run string) {
			editJSON(t, run, ConfigFile, func(c *Config) { c.Steps = 8 })
		}, false, "", ""},
		{"vocab tokens swapped", func(t *testing.T, run string) {
			editJSON(t, run, VocabFile, func(v *models.Vocab) {
				n := len(v.Target)
				v.Target[n-1], v.Target[n-2] = v.Target[n-2], v.Target[n-1]
			})
		}, false, VocabFile, "a run's vocabulary cannot change"},
		{"state adam_t", func(t *testing.T, run string) {
			editJSON(t, run, StateFile, func(s *State) { s.AdamT-- })
		}, false, StateFile, "only a checkpoint writes it"},
		{"state best_em", func(t *testing.T, run string) {
			editJSON(t, run, StateFile, func(s *State) { s.BestEM = 0.5 })
		}, false, StateFile, "changed since the checkpoint"},
		{"data.json edited", func(t *testing.T, run string) {
			editJSON(t, run, DataFileName, func(d *dataFiles) { d.Files[0].Path = "elsewhere" })
		}, false, DataFileName, "--allow-data-change"},
		{"data.json edited, allowed", func(t *testing.T, run string) {
			editJSON(t, run, DataFileName, func(d *dataFiles) { d.Files[0].Path = "elsewhere" })
		}, true, "", DataFileName + " changed since the last checkpoint: the data given is recorded anew"},
		{"data.json missing", func(t *testing.T, run string) {
			os.Remove(filepath.Join(run, DataFileName))
		}, false, DataFileName, "is missing, so the data cannot be checked: put it back, or pass --allow-data-change"},
		{"data.json missing, allowed", func(t *testing.T, run string) {
			os.Remove(filepath.Join(run, DataFileName))
		}, true, "", "is missing: the data given is recorded in a new one"},
		{"a checkpoint without digests", func(t *testing.T, run string) {
			for _, name := range []string{ModelFile, OptimFile, BestFile} {
				p := filepath.Join(run, name)
				f, err := safetensors.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := replaceSynced(p, safetensorsFill(f.Tensors, map[string]string{metaStep: f.Metadata[metaStep]})); err != nil {
					t.Fatal(err)
				}
			}
			editJSON(t, run, ConfigFile, func(c *Config) { c.LR = 0.02 })
		}, false, "", "records no digests"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.EvalEvery = 4, 2
			run := t.TempDir()
			train(t, cfg, Options{Dir: run, Data: fps})
			c.edit(t, run)
			// The config a resume starts from: the run's, as the command
			// reads it, with --steps 12.
			cfg, err := LoadConfig(filepath.Join(run, ConfigFile), DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Steps = 12
			before := snapshot(t, run)
			var notes bytes.Buffer
			_, err = Train(context.Background(), cfg, Options{Dir: run, Train: tinyData(), Dev: tinyData(), Resume: true,
				Data: fps, AllowDataChange: c.allow, Progress: progress.To(&notes)})
			if c.file == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(notes.String(), c.want) {
					t.Errorf("warnings %q, want %q", notes.String(), c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), filepath.Join(run, c.file)+" ") ||
				!strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want a line naming %s with %q", err, c.file, c.want)
			}
			sameSnapshot(t, before, snapshot(t, run))
		})
	}
}

// TestResumeLossLine: a run stopped between two metrics lines resumes to
// the uninterrupted run's metrics, the mean loss of the line after the
// stop included (state.json carries the losses since the last line).
func TestResumeLossLine(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 20, 5
	full, part := t.TempDir(), t.TempDir()
	train(t, cfg, Options{Dir: full})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evalHook = func(step int) {
		if step == 15 {
			cancel()
		}
	}
	_, err := Train(ctx, cfg, Options{Dir: part, Train: tinyData(), Dev: tinyData(), LogEvery: 10})
	evalHook = nil
	if err == nil || !strings.Contains(err.Error(), "interrupted at step 15") {
		t.Fatalf("error %v", err)
	}
	var st State
	if err := readJSONStrict(filepath.Join(part, StateFile), &st); err != nil {
		t.Fatal(err)
	}
	if st.LossSteps != 5 || !(st.LossSum > 0) {
		t.Fatalf("state %+v; want the losses of steps 11-15", st)
	}
	train(t, cfg, Options{Dir: part, Resume: true})
	if a, b := metricsOf(t, full), metricsOf(t, part); a != b {
		t.Errorf("metrics differ:\n%s\n---\n%s", a, b)
	}
	sameFile(t, filepath.Join(full, StateFile), filepath.Join(part, StateFile))
}
