package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/tasks"
)

var genFiles = []string{"train.jsonl", "dev.jsonl", "test.jsonl", "finetune.jsonl"}

func readGenDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	for _, f := range genFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		got[f] = b
	}
	return got
}

func TestGenSameSeedSameBytes(t *testing.T) {
	tmp := t.TempDir()
	args := func(dir, seed string) []string {
		return []string{"gen", "scan", "--task", "length", "--train-size", "300", "--dev-size", "20",
			"--test-size", "50", "--finetune-size", "10", "--seed", seed, "--out", dir}
	}
	a, b, c := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "c")
	for _, run := range [][]string{args(a, "4"), args(b, "4"), args(c, "5")} {
		if _, errs, code := runCLI(t, run...); code != 0 {
			t.Fatalf("%v: exit %d: %s", run, code, errs)
		}
	}
	fa, fb, fc := readGenDir(t, a), readGenDir(t, b), readGenDir(t, c)
	for _, f := range genFiles {
		if !bytes.Equal(fa[f], fb[f]) {
			t.Errorf("%s differs between two runs with the same seed", f)
		}
		if bytes.Equal(fa[f], fc[f]) {
			t.Errorf("%s is the same for seeds 4 and 5", f)
		}
	}
	// Files draw from independent streams: train and valid differ.
	if bytes.HasPrefix(fa["train.jsonl"][20:], fa["dev.jsonl"][20:200]) {
		t.Error("valid repeats train")
	}
}

func TestGenFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	out, errs, code := runCLI(t, "gen", "scan", "--task", "length", "--train-size", "40", "--dev-size", "0",
		"--test-size", "30", "--finetune-size", "20", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"scan length, seed 0", "train.jsonl", "40", "train-000001: "} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	counts := map[string]int{"train.jsonl": 40, "dev.jsonl": 0, "test.jsonl": 30, "finetune.jsonl": 20}
	for f, n := range counts {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			if len(b) != 0 {
				t.Errorf("%s: want an empty file", f)
			}
			continue
		}
		recs, err := data.DecodeRecords(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(recs) != n {
			t.Fatalf("%s: %d records, want %d", f, len(recs), n)
		}
		prefix := strings.TrimSuffix(f, ".jsonl")
		if recs[0].ID != prefix+"-000001" {
			t.Errorf("%s: first id %q", f, recs[0].ID)
		}
		for i, r := range recs {
			k := len(r.Parts)
			var test bool
			switch prefix {
			case "train":
			case "test":
				test = true
			case "finetune":
				test = tasks.DistOf(tasks.FileFinetune, i) == tasks.Test
			}
			if test != (k >= 7) {
				t.Errorf("%s %s: %d parts, test distribution %v", f, r.ID, k, test)
			}
		}
	}
	// Finetune alternates: train distribution first.
	recs, _ := data.ReadRecords(filepath.Join(dir, "finetune.jsonl"))
	if len(recs[0].Parts) > 6 || len(recs[1].Parts) < 7 {
		t.Errorf("finetune does not alternate train, test: %d, %d parts", len(recs[0].Parts), len(recs[1].Parts))
	}
}

func TestGenErrors(t *testing.T) {
	tmp := t.TempDir()
	existing := filepath.Join(tmp, "existing")
	if _, errs, code := runCLI(t, "gen", "scan", "--train-size", "5", "--test-size", "5", "--out", existing); code != 0 {
		t.Fatalf("setup: %s", errs)
	}
	before := readGenDir(t, existing)
	notDir := filepath.Join(tmp, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "new")
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no domain", []string{"gen", "--out", out}, 2, "want one domain"},
		{"unknown domain", []string{"gen", "cfq", "--out", out}, 2, `unknown domain "cfq"`},
		{"two domains", []string{"gen", "scan", "robustfill", "--out", out}, 2, "got 2 arguments"},
		{"unknown task", []string{"gen", "scan", "--task", "lenght", "--out", out}, 2, `unknown task "lenght"`},
		{"zero train", []string{"gen", "scan", "--train-size", "0", "--out", out}, 2, "--train-size must be at least 1"},
		{"zero test", []string{"gen", "scan", "--test-size", "0", "--out", out}, 2, "--test-size must be at least 1"},
		{"negative valid", []string{"gen", "scan", "--dev-size", "-1", "--out", out}, 2, "--dev-size must be at least 0"},
		{"old count flag --train", []string{"gen", "scan", "--train", "5", "--out", out}, 2, "--train is now --train-size"},
		{"old count flag --valid", []string{"gen", "scan", "--valid=5", "--out", out}, 2, "--valid is now --dev-size"},
		{"old count flag --test", []string{"gen", "robustfill", "-test", "5", "--out", out}, 2, "--test is now --test-size"},
		{"old count flag --finetune", []string{"gen", "scan", "--finetune", "5", "--out", out}, 2, "--finetune is now --finetune-size"},
		{"score --max-steps", []string{"score", "--max-steps", "5"}, 2, "--max-steps is now --steps"},
		{"run --valid-size", []string{"run", "--valid-size", "5", "--out", out}, 2, "--valid-size is now --dev-size"},
		{"negative finetune", []string{"gen", "scan", "--finetune-size", "-3", "--out", out}, 2, "--finetune-size must be at least 0"},
		{"no out", []string{"gen", "scan"}, 2, "--out is required"},
		{"bad flag", []string{"gen", "scan", "--trian", "5", "--out", out}, 2, "trian"},
		{"scfg not first", []string{"gen", "--out", out, "scfg"}, 2, "put the domain first"},
		{"exists", []string{"gen", "scan", "--train-size", "7", "--test-size", "5", "--out", existing}, 1, "already exists"},
		{"unwritable", []string{"gen", "scan", "--train-size", "5", "--test-size", "5", "--out", filepath.Join(notDir, "sub")}, 1, "create output folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errs)
			}
			if !strings.Contains(errs, tc.err) {
				t.Errorf("stderr %q, want it to contain %q", errs, tc.err)
			}
			// The flag package prints the usage after a bad flag; every
			// other error is one line.
			if tc.name != "bad flag" && strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q is not one line", errs)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run created the output folder")
	}
	after := readGenDir(t, existing)
	for _, f := range genFiles {
		if !bytes.Equal(before[f], after[f]) {
			t.Errorf("%s was changed without --force", f)
		}
	}
	entries, _ := os.ReadDir(existing)
	if len(entries) != 4 {
		t.Errorf("%d entries in the output folder, want 4 (no temporary files left)", len(entries))
	}
	// --force replaces.
	if _, errs, code := runCLI(t, "gen", "scan", "--train-size", "7", "--test-size", "5", "--out", existing, "--force"); code != 0 {
		t.Fatalf("--force: %s", errs)
	}
	if recs, _ := data.ReadRecords(filepath.Join(existing, "train.jsonl")); len(recs) != 7 {
		t.Errorf("--force wrote %d train records, want 7", len(recs))
	}
}

func TestGenRobustFill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rf")
	out, errs, code := runCLI(t, "gen", "robustfill", "--task", "length", "--train-size", "20", "--dev-size", "2",
		"--test-size", "10", "--finetune-size", "4", "--seed", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "robustfill length") {
		t.Errorf("summary %q", out)
	}
	recs, err := data.ReadRecords(filepath.Join(dir, "train.jsonl"))
	if err != nil || len(recs) != 20 || len(recs[0].Program) == 0 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}

func TestGenSCFGHelp(t *testing.T) {
	if out, errs, code := runCLI(t, "gen", "scfg", "--help"); code != 0 || !strings.Contains(out, "gen scfg") {
		t.Errorf("exit %d: %s%s", code, out, errs)
	}
}

// The -update flag rewrites golden files; another test file may declare it
// too, so it is looked up first (a flag declared twice panics).
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
	return true
}()

// TestGenGolden pins the bytes of a small run, so that a change to the
// random streams (which would silently change every dataset) is noticed.
func TestGenGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if _, errs, code := runCLI(t, "gen", "scan", "--task", "switch-concept-order", "--train-size", "3",
		"--dev-size", "2", "--test-size", "3", "--finetune-size", "2", "--seed", "7", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := readGenDir(t, dir)
	golden := filepath.Join("testdata", "gen_scan_switch")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.MkdirAll(golden, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(golden, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range genFiles {
		want, err := os.ReadFile(filepath.Join(golden, name))
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got[name], want) {
			t.Errorf("%s differs from %s (run go test -update if intended):\n%s", name, golden, got[name])
		}
	}
}
