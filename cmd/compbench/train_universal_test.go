package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainUniversal trains, resumes and predicts with the Universal
// Transformer with ACT through the command line, and rejects --act and
// --ut-steps on other models, whichever order the flags come in.
func TestTrainUniversal(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "d.jsonl")
	recs := `{"id":"a","input":"jump twice","output":"JUMP JUMP"}
{"id":"b","input":"walk","output":"WALK"}
{"id":"c","input":"walk twice","output":"WALK WALK"}
`
	if err := os.WriteFile(file, []byte(recs), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	base := []string{"train", "--train", file, "--dev", file, "--steps", "4", "--dim", "8", "--heads", "2", "--mlp", "16",
		"--batch", "2", "--warmup", "0", "--eval-every", "2"}
	args := append(append([]string(nil), base...), "--act", "--model", "universal", "--ut-steps", "3", "--out", run)
	if out, errs, code := runCLI(t, args...); code != 0 {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(run, "config.json"))
	if err != nil || !strings.Contains(string(b), `"ut_steps": 3`) || !strings.Contains(string(b), `"act": true`) {
		t.Errorf("config.json does not record ut_steps 3 and act (%v):\n%s", err, b)
	}
	if out, errs, code := runCLI(t, "train", "--resume", "--steps", "6", "--train", file, "--dev", file, "--out", run); code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errs)
	}
	preds := filepath.Join(dir, "preds.jsonl")
	if out, errs, code := runCLI(t, "predict", "--run", run, "--in", file, "--out", preds, "--beam", "2"); code != 0 {
		t.Fatalf("predict: exit %d\n%s\n%s", code, out, errs)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"act on transformer", []string{"--act", "--model", "transformer"}, "act applies to the universal model only"},
		{"steps on relative", []string{"--model", "relative", "--ut-steps", "4"}, "ut_steps applies to the universal model only"},
		{"zero steps", []string{"--model", "universal", "--ut-steps", "-2"}, "ut_steps -2 < 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := append(append(append([]string(nil), base...), tc.args...), "--out", filepath.Join(dir, "bad"))
			if _, errs, code := runCLI(t, bad...); code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, %q; want 2 and %q", code, errs, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
				t.Errorf("a refused run left its folder")
			}
		})
	}
}
