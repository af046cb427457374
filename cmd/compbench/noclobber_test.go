package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot reads every file under root.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// copyDir copies the regular files of src into a new folder dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dst, 0o755)
	for _, e := range ents {
		if e.Type().IsRegular() {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// clobberFixture is a folder of every kind of input the commands read.
type clobberFixture struct {
	base, in                   string
	data, grammar, pred, pred2 string
	split, splitTrain, lm, run string
	link, runLink              string
}

// newClobberFixture copies the inputs, the trained run included, into a
// fresh folder, so that each case starts from intact files.
func newClobberFixture(t *testing.T, run string) clobberFixture {
	t.Helper()
	f := clobberFixture{base: t.TempDir()}
	f.in = filepath.Join(f.base, "in")
	os.MkdirAll(f.in, 0o755)
	recs, _ := os.ReadFile(filepath.Join("testdata", "train-tiny.jsonl"))
	f.data = writeFile(t, f.in, "data.jsonl", string(recs))
	f.grammar = writeFile(t, f.in, "g.txt", testGrammar)
	f.pred = writeFile(t, f.in, "pred.jsonl", `{"id":"1","prediction":"JUMP"}`+"\n")
	f.pred2 = writeFile(t, f.in, "pred2.jsonl", `{"id":"1","prediction":"WALK"}`+"\n")
	f.split = filepath.Join(f.in, "split")
	os.MkdirAll(f.split, 0o755)
	f.splitTrain = writeFile(t, f.split, "train.jsonl", string(recs))
	f.lm = filepath.Join(f.in, "gpt2")
	copyDir(t, scoreFixture, f.lm)
	f.run = filepath.Join(f.in, "run")
	copyDir(t, run, f.run)
	f.link = filepath.Join(f.base, "link.jsonl") // a hard link to the data
	if err := os.Link(f.data, f.link); err != nil {
		t.Fatal(err)
	}
	f.runLink = filepath.Join(f.base, "runlink") // a symbolic link to the run
	if err := os.Symlink(f.run, f.runLink); err != nil {
		t.Fatal(err)
	}
	return f
}

// tinyTrain are train flags for a model small enough to train in a blink.
var tinyTrain = []string{"--layers", "1", "--heads", "2", "--dim", "8", "--mlp", "16", "--max-src", "8", "--max-tgt", "10",
	"--batch", "4", "--steps", "2", "--eval-every", "2"}

// TestOutputNeverReplacesInput runs every command with an output that is
// one of its inputs, mostly with --force, under other spellings and through
// links: each must refuse before touching anything, and every input must
// be intact.
func TestOutputNeverReplacesInput(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	data := filepath.Join("testdata", "train-tiny.jsonl")
	if _, errs, code := runCLI(t, append([]string{"train", "--train", data, "--dev", data, "--out", run}, tinyTrain...)...); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	lstm := []string{"--model", "lstm-copy", "--encoder", "transformer", "--layers", "1", "--dim", "8", "--mlp", "16",
		"--encoder-heads", "2", "--steps", "2"}
	cases := []struct {
		name string
		args func(f clobberFixture) []string
	}{
		{"finetune into its run", func(f clobberFixture) []string {
			return []string{"finetune", "--run", f.run, "--data", f.data, "--out", f.run, "--force", "--steps", "1"}
		}},
		{"finetune into its run without force", func(f clobberFixture) []string {
			return []string{"finetune", "--run", f.run, "--data", f.data, "--out", f.run, "--steps", "1"}
		}},
		{"finetune into a link to its run", func(f clobberFixture) []string {
			return []string{"finetune", "--run", f.run, "--data", f.data, "--out", f.runLink, "--force", "--steps", "1"}
		}},
		{"finetune into its run spelled differently", func(f clobberFixture) []string {
			return []string{"finetune", "--run", f.run, "--data", f.data, "--out", f.run + "/../run/.", "--force", "--steps", "1"}
		}},
		{"predict over its data", func(f clobberFixture) []string {
			return []string{"predict", "--run", f.run, "--in", f.data, "--out", f.data, "--force"}
		}},
		{"predict over a run file", func(f clobberFixture) []string {
			return []string{"predict", "--run", f.run, "--in", f.data, "--out", filepath.Join(f.run, "best.safetensors"), "--force"}
		}},
		{"score over its data", func(f clobberFixture) []string {
			return []string{"score", "--lm", f.lm, "--in", f.data, "--out", f.data, "--force"}
		}},
		{"score over the tokenizer", func(f clobberFixture) []string {
			return []string{"score", "--lm", f.lm, "--in", f.data, "--out", filepath.Join(f.lm, "encoder.json"), "--force"}
		}},
		{"select over its pool", func(f clobberFixture) []string {
			return []string{"select", "--pool", f.data, "--budget", "1", "--strategy", "random", "--tree", "bracketed", "--skip-bad", "--out", f.data, "--force"}
		}},
		{"convert over its input", func(f clobberFixture) []string {
			return []string{"convert", "--from", "jsonl", "--in", f.data, "--out", f.data, "--force"}
		}},
		{"convert over a hard link to its input", func(f clobberFixture) []string {
			return []string{"convert", "--from", "jsonl", "--in", f.data, "--out", f.link, "--force"}
		}},
		{"eval per-example over gold", func(f clobberFixture) []string {
			return []string{"eval", "--gold", f.data, "--pred", f.pred, "--allow-missing", "--per-example", f.data, "--force"}
		}},
		{"eval per-example over pred", func(f clobberFixture) []string {
			return []string{"eval", "--gold", f.data, "--pred", f.pred, "--allow-missing", "--per-example", f.pred, "--force"}
		}},
		{"agree matrix over a pred", func(f clobberFixture) []string {
			return []string{"agree", "--gold", f.data, "--pred", f.pred, "--pred", f.pred2, "--allow-missing", "--matrix", f.pred2, "--force"}
		}},
		{"gen scfg over its grammar", func(f clobberFixture) []string {
			return []string{"gen", "scfg", "--grammar", f.grammar, "--out", f.grammar, "--force", "--n", "3"}
		}},
		{"split into its input's folder", func(f clobberFixture) []string {
			return []string{"split", "random", "--in", f.splitTrain, "--out", f.split, "--force", "--tree", "none"}
		}},
		{"easiness over its test data", func(f clobberFixture) []string {
			return []string{"easiness", "--train", f.data, "--test", f.data, "--out", f.data, "--force", "--tree", "bracketed", "--skip-bad"}
		}},
		{"cfq import over its input", func(f clobberFixture) []string {
			tasks := writeFile(t, f.in, "tasks.txt", "IN: jump OUT: I_JUMP\nIN: walk OUT: I_WALK\n")
			return []string{"cfq", "import", "--in", tasks, "--out", tasks, "--force"}
		}},
		{"cfq export-split over its pool", func(f clobberFixture) []string {
			dir := filepath.Join(f.in, "random")
			if _, errs, code := runCLI(t, "split", "random", "--in", f.data, "--out", dir, "--tree", "none"); code != 0 {
				t.Fatal(errs)
			}
			return []string{"cfq", "export-split", "--pool", f.data, "--dir", dir, "--out", f.data, "--force"}
		}},
		{"train over its init-encoder run", func(f clobberFixture) []string {
			return append([]string{"train", "--train", f.data, "--init-encoder", f.run, "--out", f.run, "--force"}, lstm...)
		}},
		{"train over its dev data", func(f clobberFixture) []string {
			os.Rename(f.data, filepath.Join(f.run, "metrics.jsonl"))
			return append([]string{"train", "--train", f.splitTrain, "--dev", filepath.Join(f.run, "metrics.jsonl"), "--out", f.run, "--force"}, tinyTrain...)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newClobberFixture(t, run)
			args := tc.args(f)
			before := snapshot(t, f.base)
			_, errs, code := runCLI(t, args...)
			if code != 2 || !strings.Contains(errs, "never replaces an input") || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line saying an output never replaces an input", code, errs)
			}
			after := snapshot(t, f.base)
			for p, b := range before {
				if a, ok := after[p]; !ok || a != b {
					t.Errorf("%s changed or vanished", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("left %s behind", p)
				}
			}
		})
	}

	// Outputs beside the inputs stay allowed, in the run folder too.
	f := newClobberFixture(t, run)
	for _, args := range [][]string{
		{"predict", "--run", f.run, "--in", f.data, "--out", filepath.Join(f.run, "preds.jsonl")},
		{"convert", "--from", "jsonl", "--in", f.data, "--out", filepath.Join(f.in, "data.txt")},
		{"split", "random", "--in", f.splitTrain, "--out", filepath.Join(f.split, "re"), "--tree", "none"},
		{"finetune", "--run", f.run, "--data", f.data, "--out", filepath.Join(f.run, "ft"), "--steps", "1"},
	} {
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], code, errs)
		}
	}
}
