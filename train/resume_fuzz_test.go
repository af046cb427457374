package train

import (
	"os"
	"path/filepath"
	"testing"

	"compbench/progress"
)

// fuzzRun makes one small stopped run (steps 2, a checkpoint at 2) for a
// fuzz target to read over and over.
func fuzzRun(f *testing.F) (Config, string) {
	cfg := tinyConfig("transformer")
	cfg.Steps, cfg.EvalEvery = 2, 2
	dir := f.TempDir()
	if _, err := Train(f.Context(), cfg, Options{Dir: dir, Train: tinyData(), Progress: progress.Discard}); err != nil {
		f.Fatal(err)
	}
	return cfg, dir
}

// fuzzResume writes b as the run's file name, then checks what a resume
// reads: an error or a resume point whose values are in range, never a
// panic, and no change to the run folder. The file's original bytes are
// put back afterwards.
func fuzzResume(t *testing.T, cfg Config, dir, name string, b []byte) {
	p := filepath.Join(dir, name)
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(p, orig, 0o644)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	rp, err := readResume(dir, &cfg, &Options{Progress: progress.Discard})
	sameSnapshot(t, before, snapshot(t, dir))
	if err != nil {
		return
	}
	if err := rp.state.Validate(); err != nil || rp.state.Step > cfg.Steps {
		t.Fatalf("accepted state %+v: %v", rp.state, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("accepted config: %v", err)
	}
	if err := rp.vocab.Validate(); err != nil || len(rp.vocab.Source) != cfg.Model.SrcVocab || len(rp.vocab.Target) != cfg.Model.TgtVocab {
		t.Fatalf("accepted vocabulary of %d/%d tokens for %d/%d: %v", len(rp.vocab.Source), len(rp.vocab.Target),
			cfg.Model.SrcVocab, cfg.Model.TgtVocab, err)
	}
}

// FuzzResumeState fuzzes state.json.
func FuzzResumeState(f *testing.F) {
	f.Add([]byte(`{"step":2,"adam_t":2,"best_step":2,"best_em":0,"best_loss":0}`))
	f.Add([]byte(`{"step":-3}`))
	f.Add([]byte(`{"step":2,"best_em":1e999}`))
	f.Add([]byte(`{} {}`))
	cfg, dir := fuzzRun(f)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzResume(t, cfg, dir, StateFile, b) })
}

// FuzzResumeVocab fuzzes vocab.json.
func FuzzResumeVocab(f *testing.F) {
	cfg, dir := fuzzRun(f)
	good, err := os.ReadFile(filepath.Join(dir, VocabFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good) // a few hundred bytes
	f.Add([]byte(`{"source":["<pad>"],"target":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzResume(t, cfg, dir, VocabFile, b) })
}

// FuzzConfig fuzzes a training config.json, as --config reads it over the
// defaults and as a resume reads the run's own.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"steps":5,"model":{"dim":16,"heads":2}}`))
	f.Add([]byte(`{"steps":0}`))
	f.Add([]byte(`{"lr":-1,"model":{"variant":"nope"}}`))
	f.Add([]byte(`{"steps":5} trailing`))
	cfg, dir := fuzzRun(f)
	good, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(p, b, 0o644)
		if c, err := LoadConfig(p, DefaultConfig()); err == nil && c.Validate() == nil {
			if c.Steps < 1 || c.Batch < 1 || !(c.LR > 0) || c.Model.Layers < 1 || c.Model.Dim < 1 {
				t.Fatalf("accepted config %+v", c)
			}
		}
		fuzzResume(t, cfg, dir, ConfigFile, b)
	})
}
