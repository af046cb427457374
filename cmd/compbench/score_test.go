package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/models/gpt2"
)

const scoreFixture = "../../lm/testdata/gpt2-tiny"

func TestScoreCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","input":"jump twice","output":"JUMP JUMP"}`+"\n"+`{"id":"b","input":"walk","output":"WALK"}`+"\n"), 0o644)
	long := filepath.Join(dir, "long.jsonl")
	os.WriteFile(long, []byte(`{"id":"x","input":"`+strings.Repeat("jump ", 40)+`","output":"X"}`+"\n"), 0o644)

	// A checkpoint whose vocabulary does not match the tokenizer's.
	small := filepath.Join(dir, "small")
	m, _ := gpt2.New(gpt2.Config{NLayer: 1, NHead: 1, NEmbd: 4, NPositions: 8, VocabSize: 100, LayerNormEpsilon: 1e-5}, 1)
	set := data.NewOutputSet(false)
	if err := m.Save(set, small); err != nil {
		t.Fatal(err)
	}
	set.Commit()
	for _, f := range []string{"encoder.json", "vocab.bpe"} {
		b, _ := os.ReadFile(filepath.Join(scoreFixture, f))
		os.WriteFile(filepath.Join(small, f), b, 0o644)
	}

	out := filepath.Join(dir, "s.jsonl")
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"scores", []string{"--lm", scoreFixture, "--in", in, "--out", out}, 0, "wrote 2 scores"},
		{"no overwrite", []string{"--lm", scoreFixture, "--in", in, "--out", out}, 1, "already exists"},
		{"force", []string{"--lm", scoreFixture, "--in", in, "--out", out, "--force", "--field", "output", "--prompt", "do: {input} {query}"}, 0, "wrote 2"},
		{"missing flags", []string{"--in", in}, 2, "required"},
		{"bad template", []string{"--lm", scoreFixture, "--in", in, "--out", out + "2", "--prompt", "{query}!"}, 2, "at the end"},
		{"too long", []string{"--lm", scoreFixture, "--in", long, "--out", out + "3"}, 1, "--truncate"},
		{"truncate", []string{"--lm", scoreFixture, "--in", long, "--out", out + "4", "--truncate"}, 0, "truncated 1 of 1"},
		{"vocab mismatch", []string{"--lm", small, "--in", in, "--out", out + "5"}, 1, "vocab_size 100"},
		{"scratch without folds", []string{"--lm", scoreFixture, "--in", in, "--out", out + "6", "--from-scratch"}, 2, "needs --folds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, append([]string{"score"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.wantErr) {
				t.Errorf("exit %d stderr %q, want %d and %q", code, errs, tc.code, tc.wantErr)
			}
		})
	}
	recs, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(recs), `"id":"a","score":`) || strings.Count(string(recs), "\n") != 2 {
		t.Errorf("output %q, %v", recs, err)
	}
	if _, err := os.Stat(out + "3"); err == nil {
		t.Error("failed run left an output file")
	}
	t.Run("from scratch default learning rate", func(t *testing.T) {
		_, errs, code := runCLI(t, "score", "--lm", scoreFixture, "--in", in, "--out", filepath.Join(dir, "lr.jsonl"), "--folds", "2",
			"--from-scratch", "--steps", "1", "--train-batch", "1", "--eval-every", "1")
		// Two records leave one per training fold, none for validation: the
		// run fails after reporting its settings.
		if code != 1 || !strings.Contains(errs, "learning rate 0.001") {
			t.Errorf("exit %d: %s", code, errs)
		}
	})
	t.Run("from scratch is deterministic", func(t *testing.T) {
		var lines []string
		for i := 0; i < 8; i++ {
			lines = append(lines, `{"id":"r`+string(rune('a'+i))+`","input":"jump `+strings.Repeat("twice ", i%3)+`left","output":"X"}`)
		}
		in8 := filepath.Join(dir, "in8.jsonl")
		os.WriteFile(in8, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		var got []string
		for k := 0; k < 2; k++ {
			o := filepath.Join(dir, "scratch.jsonl")
			_, errs, code := runCLI(t, "score", "--lm", scoreFixture, "--in", in8, "--out", o, "--force", "--folds", "2",
				"--from-scratch", "--size", "tiny", "--steps", "2", "--train-batch", "2", "--eval-every", "1", "--lr", "1e-3", "--seed", "4")
			if code != 0 || !strings.Contains(errs, "from-scratch model over the") {
				t.Fatalf("exit %d: %s", code, errs)
			}
			b, _ := os.ReadFile(o)
			got = append(got, string(b))
		}
		if got[0] != got[1] || strings.Count(got[0], "\n") != 8 || strings.Contains(got[0], "NaN") {
			t.Errorf("two runs with one seed:\n%s\n%s", got[0], got[1])
		}
	})
}

// TestScoreFoldsDevice: k-fold from-scratch scoring on the engine's CPU
// backend names the backend and the speed, and two runs with one seed
// write the same bytes. (The engine is checked against the TapeMachine in
// package models.)
func TestScoreFoldsDevice(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	words := []string{"jump", "walk", "run", "look"}
	for i := 0; i < 24; i++ {
		lines = append(lines, `{"id":"r`+string(rune('a'+i))+`","input":"`+words[i%4]+` `+strings.Repeat("twice ", i%3)+`and turn left","output":"X"}`)
	}
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	var got []string
	for k := 0; k < 2; k++ {
		o := filepath.Join(dir, "engine"+string(rune('0'+k))+".jsonl")
		errs := mustRun(t, "score", "--lm", scoreFixture, "--in", in, "--out", o, "--folds", "2", "--from-scratch", "--size", "tiny",
			"--steps", "20", "--eval-every", "5", "--seed", "2", "--device", "cpu")
		if !strings.Contains(errs, "engine executor on cpu") || !strings.Contains(errs, "tokens/s") {
			t.Errorf("stderr does not name the backend or the speed:\n%s", errs)
		}
		b, _ := os.ReadFile(o)
		got = append(got, string(b))
	}
	if got[0] != got[1] || strings.Count(got[0], "\n") != 24 {
		t.Errorf("two runs with one seed differ:\n%s\n%s", got[0], got[1])
	}
}
