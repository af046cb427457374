package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asCLIEnv makes the test binary run as the compbench command, so tests can
// run it as a subprocess (and kill it) without building the binary.
const asCLIEnv = "COMPBENCH_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// killArgs train a tiny Transformer with dropout and a dev set, with a
// checkpoint (and a best-checkpoint decision) every second step.
func killArgs(t *testing.T, out string) []string {
	data, err := filepath.Abs(filepath.Join("testdata", "train-tiny.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"train", "--model", "transformer", "--train", data, "--dev", data, "--out", out,
		"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--max-src", "8", "--max-tgt", "10",
		"--batch", "4", "--bucket-width", "4", "--lr", "1e-2", "--warmup", "10", "--dropout", "0.1",
		"--steps", "24", "--eval-every", "2", "--seed", "3"}
}

// cliCommand runs the test binary as compbench; every checkpoint move
// first sleeps pause, so that kills land inside checkpoint writes often.
func cliCommand(args []string, pause time.Duration) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1", "COMPBENCH_TEST_CHECKPOINT_PAUSE="+pause.String(),
		"OPENBLAS_NUM_THREADS=1", "GOMAXPROCS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// TestTrainKill9 kills training runs with SIGKILL at seeded random moments,
// many inside checkpoint writes, and resumes each until it finishes. A
// checkpoint commits with one rename, so no kill may tear it: every chain
// of kills and resumes must end with the weights, moments, best weights,
// state and metrics of the uninterrupted run, byte for byte. (A resume
// that found a torn checkpoint would fail with "inconsistent checkpoint";
// that, too, is reported here, since the commit is meant to rule it out.)
func TestTrainKill9(t *testing.T) {
	const (
		minKills   = 24
		minInside  = 6 // kills that must land inside a checkpoint write
		pause      = 3 * time.Millisecond
		budget     = 90 * time.Second // a bound against hangs; it takes 10-15 s
		maxRetries = 40               // attempts per chain before giving up
	)
	dir := t.TempDir()
	ref := filepath.Join(dir, "reference")
	start := time.Now()
	cmd, stderr := cliCommand(killArgs(t, ref), pause)
	if err := cmd.Run(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, stderr)
	}
	full := time.Since(start)
	rng := rand.New(rand.NewPCG(18, 9))
	kills, inside, installing, chains := 0, 0, 0, 0
	for kills < minKills {
		if time.Since(start) > budget {
			t.Fatalf("only %d kills in %v", kills, budget)
		}
		run := filepath.Join(dir, fmt.Sprintf("chain%02d", chains))
		chains++
		for attempt := 0; ; attempt++ {
			if attempt == maxRetries {
				t.Fatalf("%s: no finish after %d attempts", run, attempt)
			}
			args := append(killArgs(t, run), "--resume")
			if _, err := os.Stat(filepath.Join(run, "config.json")); err != nil {
				// Killed before the run was set up: start it again.
				args = append(killArgs(t, run), "--force")
			}
			cmd, stderr := cliCommand(args, pause)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			at := time.Duration(rng.Float64() * float64(full))
			var err error
			killed := false
			select {
			case err = <-done:
			case <-time.After(at):
				cmd.Process.Signal(syscall.SIGKILL)
				err = <-done
				var ee *exec.ExitError
				killed = errors.As(err, &ee) && !ee.Exited()
			}
			if killed {
				kills++
				switch midCheckpoint(run) {
				case ".checkpoint-tmp-":
					inside++
				case ".checkpoint-pending":
					inside++
					installing++
				}
				continue
			}
			if err != nil {
				if strings.Contains(stderr.String(), "inconsistent checkpoint") {
					t.Fatalf("%s: a kill tore the checkpoint: %s", run, stderr)
				}
				t.Fatalf("%s: attempt %d: %v\n%s", run, attempt, err, stderr)
			}
			for _, f := range []string{"model.safetensors", "optim.safetensors", "best.safetensors", "state.json"} {
				sameBytes(t, filepath.Join(ref, f), filepath.Join(run, f))
			}
			if a, b := stableMetrics(t, ref), stableMetrics(t, run); a != b {
				t.Errorf("%s: metrics.jsonl differs from the uninterrupted run's:\n%s\n---\n%s", run, b, a)
			}
			break
		}
	}
	t.Logf("%d chains, %d kills (%d inside a checkpoint write, %d of them while installing it) in %v; an uninterrupted run takes %v",
		chains, kills, inside, installing, time.Since(start).Round(time.Millisecond), full.Round(time.Millisecond))
	if inside < minInside {
		t.Errorf("only %d of %d kills landed inside a checkpoint write, want %d", inside, kills, minInside)
	}
}

// midCheckpoint tells whether a killed run left a checkpoint being
// installed (".checkpoint-pending") or being written (".checkpoint-tmp-"),
// or neither ("").
func midCheckpoint(dir string) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	found := ""
	for _, e := range ents {
		switch n := e.Name(); {
		case n == ".checkpoint-pending":
			return n
		case strings.HasPrefix(n, ".checkpoint-tmp-"):
			found = ".checkpoint-tmp-"
		}
	}
	return found
}

func sameBytes(t *testing.T, want, got string) {
	t.Helper()
	a, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s differs from the uninterrupted run's %s", got, want)
	}
}

// unstable matches the fields of metrics.jsonl that a resume may change:
// the throughput and the clock.
var unstable = regexp.MustCompile(`,?"tokens_per_s":[0-9.e+-]+|,?"wall":\{[^}]*\}`)

// stableMetrics is metrics.jsonl without its unstable fields: each step's
// line appears once, with the same loss, dev results, learning rate and
// norm.
func stableMetrics(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return unstable.ReplaceAllString(string(b), "")
}

// TestTrainStopSignals: SIGINT, SIGTERM and SIGHUP stop training with exit
// status 1, naming the step; the last finished step is checkpointed first
// (at most the step in progress is lost), no temporaries are left, and the
// resumed run ends with the uninterrupted run's files, byte for byte.
func TestTrainStopSignals(t *testing.T) {
	// Checkpoints every 7 steps and a pause after each step, so a signal
	// mostly lands between checkpoints.
	args := func(run string) []string { return append(killArgs(t, run), "--steps", "60", "--eval-every", "7") }
	ref := filepath.Join(t.TempDir(), "reference")
	if cmd, stderr := cliCommand(args(ref), 0); cmd.Run() != nil {
		t.Fatalf("uninterrupted run: %s", stderr)
	}
	stopped := regexp.MustCompile(`interrupted at step (\d+)( \(dev evaluation\))?; checkpoint \S+ \(step (\d+)\)`)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "run")
			cmd, stderr := cliCommand(args(run), 0)
			cmd.Env = append(cmd.Env, "COMPBENCH_TEST_STEP_PAUSE=20ms")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(filepath.Join(run, "state.json")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no checkpoint in 20 s: %s", stderr)
				}
			}
			time.Sleep(50 * time.Millisecond) // a few steps past the checkpoint
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			m := stopped.FindStringSubmatch(stderr.String())
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || m == nil {
				t.Fatalf("%v, stderr %q; want exit status 1, the step and the checkpoint", err, stderr)
			}
			// The checkpoint is the step before the one in progress, or
			// that step when its dev evaluation was interrupted.
			at, saved := atoi(t, m[1]), atoi(t, m[3])
			if want := at - 1; m[2] != "" {
				want = at
				if saved != want {
					t.Errorf("stopped at step %d (evaluation), checkpoint of step %d", at, saved)
				}
			} else if saved != want {
				t.Errorf("stopped at step %d, checkpoint of step %d; want %d", at, saved, want)
			}
			ents, _ := os.ReadDir(run)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("%s left behind", e.Name())
				}
			}
			cmd, stderr = cliCommand(append(args(run), "--resume"), 0)
			if err := cmd.Run(); err != nil {
				t.Fatalf("resume: %v\n%s", err, stderr)
			}
			for _, f := range []string{"model.safetensors", "optim.safetensors", "best.safetensors", "state.json"} {
				sameBytes(t, filepath.Join(ref, f), filepath.Join(run, f))
			}
			if a, b := stableMetrics(t, ref), stableMetrics(t, run); a != b {
				t.Errorf("metrics.jsonl differs from the uninterrupted run's:\n%s\n---\n%s", b, a)
			}
			t.Logf("stopped at step %d, checkpoint %d", at, saved)
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
