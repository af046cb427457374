package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"compbench/models"
	"compbench/progress"
	"compbench/safetensors"
)

// snapshot maps each entry of dir (recursively) to its bytes, so a test
// can tell that a failed call wrote nothing.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t testing.TB, before, after map[string]string) {
	t.Helper()
	var diff []string
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			diff = append(diff, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("the run folder changed: %v", diff)
	}
}

// stoppedRun trains cfg.Steps = 4 with a checkpoint at 2 and 4.
func stoppedRun(t *testing.T) (Config, string) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 4, 2
	dir := t.TempDir()
	train(t, cfg, Options{Dir: dir})
	return cfg, dir
}

// TestResumeRefusesCorruptState: every out-of-range or malformed
// state.json is a one-line error naming the file, without a panic and
// without any change to the run folder (metrics.jsonl was emptied before).
func TestResumeRefusesCorruptState(t *testing.T) {
	cases := []struct {
		name, state, want string
	}{
		{"negative step", `{"step": -3, "adam_t": 0, "best_step": 0, "best_em": 0, "best_loss": 0}`, "step -3 < 0"},
		{"adam_t past step", `{"step": 4, "adam_t": 9, "best_step": 4, "best_em": 0, "best_loss": 1}`, "adam_t 9"},
		{"negative adam_t", `{"step": 4, "adam_t": -1, "best_step": 4, "best_em": 0, "best_loss": 1}`, "adam_t -1"},
		{"best_step past step", `{"step": 4, "adam_t": 4, "best_step": 6, "best_em": 0, "best_loss": 1}`, "best_step 6"},
		{"best_em over 1", `{"step": 4, "adam_t": 4, "best_step": 4, "best_em": 1.5, "best_loss": 1}`, "best_em 1.5"},
		{"negative loss", `{"step": 4, "adam_t": 4, "best_step": 4, "best_em": 0, "best_loss": -1}`, "best_loss -1"},
		{"huge loss", `{"step": 4, "adam_t": 4, "best_step": 4, "best_em": 0, "best_loss": 1e400}`, "state.json"},
		{"past the steps asked", `{"step": 40, "adam_t": 40, "best_step": 4, "best_em": 0, "best_loss": 1}`, "past the 4 steps"},
		{"unknown field", `{"step": 4, "stepz": 1}`, `unknown field "stepz"`},
		{"trailing data", `{"step": 4, "adam_t": 4, "best_step": 4, "best_em": 0, "best_loss": 1} x`, "after the JSON object"},
		{"empty", ``, "empty file"},
		{"not json", `step=4`, "state.json"},
		{"wrong type", `{"step": "4"}`, "state.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, dir := stoppedRun(t)
			if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(c.state), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			_, err := Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Dev: tinyData(), Resume: true})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

// TestResumeInconsistent: checkpoint files of another step than state.json
// are refused as an inconsistent checkpoint, before anything is written.
func TestResumeInconsistent(t *testing.T) {
	cases := []struct {
		name string
		file string // replaced by the file of the step-2 checkpoint
	}{
		{"model", ModelFile},
		{"optim", OptimFile},
		{"best", BestFile},
		{"state", StateFile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.EvalEvery = 4, 2
			dir, early := t.TempDir(), t.TempDir()
			two := cfg
			two.Steps = 2
			// Each checkpoint's dev exact match is its best, so
			// best.safetensors is the latest checkpoint.
			train(t, two, Options{Dir: early})
			train(t, cfg, Options{Dir: dir})
			b, err := os.ReadFile(filepath.Join(early, c.file))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, c.file), b, 0o644)
			before := snapshot(t, dir)
			cfg.Steps = 6
			_, err = Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Resume: true})
			if !errors.Is(err, ErrInconsistent) || !strings.HasPrefix(err.Error(), "inconsistent checkpoint: ") {
				t.Errorf("got %v, want an inconsistent checkpoint", err)
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	t.Run("weights without state", func(t *testing.T) {
		cfg, dir := stoppedRun(t)
		os.Remove(filepath.Join(dir, StateFile))
		_, err := Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Resume: true})
		if !errors.Is(err, ErrInconsistent) {
			t.Errorf("got %v, want an inconsistent checkpoint", err)
		}
	})
}

// TestResumeBeforeFirstCheckpoint: a run stopped before its first
// checkpoint resumes from step 0 (config, vocabulary and seed of the run)
// to the weights of an uninterrupted run; a run whose start weights are
// not the seed's (an Init hook, as --init-encoder) resumes from them.
func TestResumeBeforeFirstCheckpoint(t *testing.T) {
	shift := func(m models.Model, _ *models.Vocab) error {
		p := m.Params()
		for i := range p.Names {
			p.Data(i)[0] += 0.25
		}
		return nil
	}
	cases := []struct {
		name string
		init func(models.Model, *models.Vocab) error
	}{
		{"seed initialisation", nil},
		{"init hook", shift},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.EvalEvery = 6, 3
			full, part := t.TempDir(), t.TempDir()
			train(t, cfg, Options{Dir: full, Init: c.init})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := Train(ctx, cfg, Options{Dir: part, Train: tinyData(), Dev: tinyData(), Init: c.init})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want an interrupted run", err)
			}
			if st, err := os.ReadFile(filepath.Join(part, StateFile)); err == nil && !strings.Contains(string(st), `"step": 0,`) {
				t.Fatalf("the interrupted run wrote a checkpoint past step 0: %s", st)
			}
			train(t, cfg, Options{Dir: part, Resume: true})
			for _, f := range []string{ModelFile, OptimFile, BestFile, StateFile} {
				sameFile(t, filepath.Join(full, f), filepath.Join(part, f))
			}
		})
	}
}

// TestResumeFinishesPendingCheckpoint: a checkpoint committed but not yet
// installed (the process died between renames) is installed on resume, and
// stale temporaries are removed.
func TestResumeFinishesPendingCheckpoint(t *testing.T) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 4, 2
	full, part, two := t.TempDir(), t.TempDir(), t.TempDir()
	train(t, cfg, Options{Dir: full})
	half := cfg
	half.Steps = 2
	train(t, half, Options{Dir: part})
	train(t, cfg, Options{Dir: two}) // the step-4 files to be "pending"
	pd := filepath.Join(part, pendingDir)
	os.Mkdir(pd, 0o755)
	// The model already moved; optim, best and state wait in the folder.
	for _, f := range []string{OptimFile, BestFile, StateFile} {
		b, _ := os.ReadFile(filepath.Join(two, f))
		os.WriteFile(filepath.Join(pd, f), b, 0o644)
	}
	b, _ := os.ReadFile(filepath.Join(two, ModelFile))
	os.WriteFile(filepath.Join(part, ModelFile), b, 0o644)
	os.WriteFile(filepath.Join(part, ".model.safetensors.tmp-123"), []byte("half"), 0o644)
	os.Mkdir(filepath.Join(part, stagingPrefix+"9"), 0o755)
	// Readers take the committed checkpoint before it is installed.
	r, err := OpenRun(part, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.weights != filepath.Join(pd, BestFile) {
		t.Errorf("OpenRun read %s, want the pending best weights", r.weights)
	}
	cfg.Steps = 4
	train(t, cfg, Options{Dir: part, Resume: true})
	for _, f := range []string{ModelFile, OptimFile, BestFile, StateFile} {
		sameFile(t, filepath.Join(full, f), filepath.Join(part, f))
	}
	ents, _ := os.ReadDir(part)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the run folder", e.Name())
		}
	}
}

// TestNonFiniteWeights: a NaN or Inf weight is refused when loaded, naming
// the file and the tensor.
func TestNonFiniteWeights(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float32
		want string
	}{
		{"NaN", float32(math.NaN()), "holds NaN"},
		{"+Inf", float32(math.Inf(1)), "holds +Inf"},
		{"-Inf", float32(math.Inf(-1)), "holds -Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, dir := stoppedRun(t)
			p := filepath.Join(dir, ModelFile)
			f, err := safetensors.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			name := f.Names()[len(f.Names())/2]
			ts := make([]safetensors.Tensor, len(f.Tensors))
			for i, tn := range f.Tensors {
				v, _ := tn.Float32s()
				if tn.Name == name {
					v[len(v)-1] = c.v
				}
				ts[i], _ = safetensors.FromFloat32s(tn.Name, tn.Shape, v)
			}
			if err := replaceSynced(p, safetensorsFill(ts, f.Metadata)); err != nil {
				t.Fatal(err)
			}
			want := p + ": tensor " + name + " " + c.want
			if _, err := OpenRun(dir, false); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("OpenRun: got %v, want %q", err, want)
			}
			cfg.Steps = 6
			_, err = Train(context.Background(), cfg, Options{Dir: dir, Train: tinyData(), Resume: true, Progress: progress.Discard})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("resume: got %v, want %q", err, want)
			}
		})
	}
}

// TestResumeDataChange: resuming on data whose fingerprint differs from
// data.json is refused unless allowed.
func TestResumeDataChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	a := write("a.jsonl", "one")
	b := write("b.jsonl", "two")
	c := write("c.jsonl", "three")
	fp := func(role, p string) DataFile {
		f, err := Fingerprint(role, p)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cases := []struct {
		name  string
		now   []DataFile
		allow bool
		want  string // "" : accepted
	}{
		{"same", []DataFile{fp("train", a), fp("dev", b)}, false, ""},
		{"moved but same bytes", []DataFile{fp("train", a), {Role: "dev", Path: "elsewhere", Size: fp("dev", b).Size, SHA256: fp("dev", b).SHA256}}, false, ""},
		{"other train", []DataFile{fp("train", c), fp("dev", b)}, false, "--train " + c},
		{"dev dropped", []DataFile{fp("train", a)}, false, "--dev is missing"},
		{"other dev", []DataFile{fp("train", a), fp("dev", c)}, false, "--dev " + c},
		{"other train allowed", []DataFile{fp("train", c), fp("dev", b)}, true, ""},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			cfg := tinyConfig("transformer")
			cfg.Steps, cfg.EvalEvery = 4, 2
			run := t.TempDir()
			train(t, cfg, Options{Dir: run, Data: []DataFile{fp("train", a), fp("dev", b)}})
			cfg.Steps = 6
			before := snapshot(t, run)
			_, err := Train(context.Background(), cfg, Options{Dir: run, Train: tinyData(), Dev: tinyData(), Resume: true,
				Data: k.now, AllowDataChange: k.allow})
			if k.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), k.want) || !strings.Contains(err.Error(), "--allow-data-change") {
				t.Errorf("got %v, want %q", err, k.want)
			}
			sameSnapshot(t, before, snapshot(t, run))
		})
	}
}

// TestLoadConfigStrict: a config file is one JSON object with known keys,
// nothing after it.
func TestLoadConfigStrict(t *testing.T) {
	cases := []struct {
		name, text, want string // want "": accepted
	}{
		{"object", `{"steps": 5}`, ""},
		{"trailing space", "{\"steps\": 5}\n\n", ""},
		{"trailing garbage", `{"steps": 5} x`, "after the JSON object"},
		{"second object", `{"steps": 5}{"steps": 6}`, "after the JSON object"},
		{"unknown key", `{"stepz": 5}`, `unknown field "stepz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cfg.json")
			os.WriteFile(p, []byte(c.text), 0o644)
			cfg, err := LoadConfig(p, DefaultConfig())
			switch {
			case c.want == "" && (err != nil || cfg.Steps != 5):
				t.Errorf("got %v, steps %d", err, cfg.Steps)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestResumeWithoutRun: a folder without config.json (a start killed
// before it was written) holds no run to resume, and says how to start.
func TestResumeWithoutRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, VocabFile), []byte("{}"), 0o644)
	_, err := Train(context.Background(), tinyConfig("transformer"), Options{Dir: dir, Train: tinyData(), Resume: true})
	if err == nil || !strings.Contains(err.Error(), "holds no run to resume") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("got %v", err)
	}
}
