package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests here feed every command inputs that used to exhaust memory,
// hang, crash or pass unnoticed (BENCHMARKS.md, "Reliability"): each must
// end at once with exit status 1 (2 for a usage error), one line on
// standard error, and no output.

// copyWithLinks copies the regular files of src into a new folder, each
// file in swap replaced by a symbolic link to its target.
func copyWithLinks(t *testing.T, src string, swap map[string]string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range swap {
		os.Remove(filepath.Join(dst, name))
		if err := os.Symlink(target, filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// sparse makes a file of n bytes that takes no disk.
func sparse(t *testing.T, dir, name string, n int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	return p
}

// trainedRun trains the tiny run the tests read.
func trainedRun(t *testing.T) string {
	t.Helper()
	good := filepath.Join("testdata", "train-tiny.jsonl")
	run := filepath.Join(t.TempDir(), "run")
	if _, errs, code := runCLI(t, append([]string{"train", "--train", good, "--dev", good, "--out", run}, tinyTrain...)...); code != 0 {
		t.Fatalf("train: %s", errs)
	}
	return run
}

// TestBoundedReaders: every file read whole is bounded by its kind
// (data.ReadFileLimit): /dev/zero, a link to it, or a sparse file past the
// bound, given on the command line or inside a run, model, split or sweep
// folder, fails at once with exit status 1 and writes nothing.
func TestBoundedReaders(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("testdata", "train-tiny.jsonl")
	run := trainedRun(t)
	splitDir := filepath.Join(dir, "split")
	if _, errs, code := runCLI(t, "split", "random", "--in", good, "--out", splitDir, "--tree", "none"); code != 0 {
		t.Fatalf("split: %s", errs)
	}
	hugeConfig := sparse(t, dir, "huge.json", 5<<20)
	hugeScores := sparse(t, dir, "huge.scores.jsonl", 513<<20)
	recorded := filepath.Join(dir, "sweep-out")
	os.Mkdir(recorded, 0o755)
	os.Symlink("/dev/zero", filepath.Join(recorded, "sweep.json"))
	const zero = "/dev/zero"
	device := "not a regular file or a pipe"
	out := func(name string) string { return filepath.Join(dir, "out-"+name) }
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"train --config /dev/zero", append([]string{"train", "--train", good, "--config", zero, "--out", out("a")}, tinyTrain...), device},
		{"train --config past its bound", append([]string{"train", "--train", good, "--config", hugeConfig, "--out", out("b")}, tinyTrain...),
			"larger than 4 MiB, the most a config file may be"},
		{"sweep --file /dev/zero", []string{"sweep", "--file", zero, "--out", out("c"), "--local"}, device},
		{"split --scores /dev/zero", []string{"split", "likelihood", "--in", good, "--scores", zero, "--out", out("d"), "--tree", "none"}, device},
		{"split --scores past its bound", []string{"split", "likelihood", "--in", good, "--scores", hugeScores, "--out", out("e"), "--tree", "none"},
			"larger than 512 MiB, the most a score file may be"},
		{"cfq import --split /dev/zero", []string{"cfq", "import", "--in", good, "--split", zero, "--out-dir", out("f")}, device},
		{"stats --split, split.json a link to /dev/zero", []string{"stats", "--split", copyWithLinks(t, splitDir, map[string]string{"split.json": zero})}, device},
		{"predict, the run's config.json a link to /dev/zero", []string{"predict", "--run", copyWithLinks(t, run, map[string]string{"config.json": zero}), "--in", good, "--out", out("g")}, device},
		{"predict, the run's vocab.json a link to /dev/zero", []string{"predict", "--run", copyWithLinks(t, run, map[string]string{"vocab.json": zero}), "--in", good, "--out", out("h")}, device},
		{"train --resume, metrics.jsonl a link to /dev/zero", []string{"train", "--resume", "--out", copyWithLinks(t, run, map[string]string{"metrics.jsonl": zero}), "--train", good, "--dev", good, "--steps", "4"}, device},
		{"score, config.json a link to /dev/zero", []string{"score", "--lm", copyWithLinks(t, scoreFixture, map[string]string{"config.json": zero}), "--in", good, "--out", out("i")}, device},
		{"score, encoder.json a link to /dev/zero", []string{"score", "--lm", copyWithLinks(t, scoreFixture, map[string]string{"encoder.json": zero}), "--in", good, "--out", out("j")}, device},
		{"score, vocab.bpe a link to /dev/zero", []string{"score", "--lm", copyWithLinks(t, scoreFixture, map[string]string{"vocab.bpe": zero}), "--in", good, "--out", out("k")}, device},
		{"train --init, config.json a link to /dev/zero", []string{"train", "--init", "hf:" + copyWithLinks(t, fixture("t5-tiny"), map[string]string{"config.json": zero}), "--train", good, "--out", out("l")}, device},
		{"train --init, BART's vocab.json a link to /dev/zero", []string{"train", "--init", "hf:" + copyWithLinks(t, fixture("bart-tiny"), map[string]string{"vocab.json": zero}), "--train", good, "--out", out("m")}, device},
		{"report, sweep.json a link to /dev/zero", []string{"report", recorded, "--out", out("n")}, device},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			stdout, errs, code := runCLI(t, tc.args...)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
			}
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n") // warnings may come first
			if code != 1 || !strings.Contains(lines[len(lines)-1], tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and a last line with %q", code, errs, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if ents, _ := filepath.Glob(filepath.Join(dir, "out-*")); len(ents) > 0 {
				t.Errorf("outputs written: %v", ents)
			}
		})
	}
}

// waitForFIFOOpen waits until a thread of process pid waits in the
// kernel for a FIFO's other end, or a few seconds have passed.
func waitForFIFOOpen(pid int) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, w := range tasks {
			if b, _ := os.ReadFile(w); strings.Contains(string(b), "wait_for_partner") {
				return
			}
		}
	}
}

// TestFIFOInputsStopOnSignal: a FIFO that no writer opens, given as any
// kind of input, used to hold its reader in open(2) past SIGTERM; now the
// signal ends the wait, with exit status 1 and nothing written.
func TestFIFOInputsStopOnSignal(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	good, err := filepath.Abs(filepath.Join("testdata", "train-tiny.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
	}{
		{"train --train", append([]string{"train", "--train", fifo, "--out", out}, tinyTrain...)},
		{"train --config", append([]string{"train", "--train", good, "--config", fifo, "--out", out}, tinyTrain...)},
		{"split --in", []string{"split", "random", "--in", fifo, "--out", out}},
		{"eval --pred", []string{"eval", "--gold", good, "--pred", fifo}},
		{"sweep --file", []string{"sweep", "--file", fifo, "--out", out, "--local"}},
		{"cfq import --in", []string{"cfq", "import", "--in", fifo, "--out", out}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr := cliCommand(tc.args, 0)
			var stdout strings.Builder
			cmd.Stdout = &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForFIFOOpen(cmd.Process.Pid)
			start := time.Now()
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(3 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatal("still waiting 3 s after SIGTERM")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "stopped while waiting for a writer") {
				t.Fatalf("%v after %s; stderr %q", err, time.Since(start), stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) || stdout.Len() > 0 {
				t.Errorf("output written: %v, stdout %q", err, stdout.String())
			}
		})
	}
}
