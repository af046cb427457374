package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"compbench/sweep"
)

// waitHolder waits until dir's lock file names process pid, failing the
// test after 30 s.
func waitHolder(t *testing.T, dir string, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	want := fmt.Sprintf("%d ", cmd.Process.Pid)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(dir, ".lock")); strings.HasPrefix(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("process %d never locked %s: %s", cmd.Process.Pid, dir, stderr)
		}
	}
}

// startHolder starts compbench with args in its own process group, each
// training step slowed by pause, and waits until it holds dir's lock.
func startHolder(t *testing.T, dir string, args []string, pause string) (*exec.Cmd, <-chan error, *bytes.Buffer) {
	t.Helper()
	cmd, stderr := cliCommand(args, 0)
	cmd.Env = append(cmd.Env, "COMPBENCH_TEST_STEP_PAUSE="+pause)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	waitHolder(t, dir, cmd, stderr)
	return cmd, done, stderr
}

// killHolder kills the holder's process group with SIGKILL, as the OOM
// killer or kill -9 would, and waits for it; it fails the test when the
// holder had finished already (the test must be made longer).
func killHolder(t *testing.T, cmd *exec.Cmd, done <-chan error, stderr *bytes.Buffer) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("the holder ended before the checks (%v): make it longer\n%s", err, stderr)
	default:
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// TestRunFolderLock: while one train writes a run folder (a second
// process), every other writer of that folder is refused at once with
// exit status 1 and one line naming the holder's PID; after the holder is
// killed with SIGKILL the folder resumes, its stale lock file no
// obstacle, and the lock file goes with the run that finished.
func TestRunFolderLock(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	base := filepath.Join(dir, "base")
	data := tinyData(t)
	tiny := []string{"--layers", "1", "--heads", "2", "--dim", "16", "--mlp", "32", "--batch", "4", "--eval-every", "5"}
	for _, d := range []string{run, base} {
		if _, errs, code := runCLI(t, append([]string{"train", "--train", data, "--out", d, "--steps", "4"}, tiny...)...); code != 0 {
			t.Fatalf("first run: %s", errs)
		}
	}
	holder, done, herr := startHolder(t, run, []string{"train", "--resume", "--train", data, "--out", run, "--steps", "40"}, "250ms")
	want := fmt.Sprintf("run folder %s is in use by PID %d (compbench train); wait for it or stop it\n", run, holder.Process.Pid)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"train --resume", []string{"train", "--resume", "--train", data, "--out", run, "--steps", "8"}},
		{"train --force", append([]string{"train", "--force", "--train", data, "--out", run, "--steps", "4"}, tiny...)},
		{"finetune", []string{"finetune", "--run", base, "--data", data, "--out", run, "--force", "--steps", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, stderr := cliCommand(c.args, 0)
			start := time.Now()
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.HasSuffix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("%v, stderr %q; want exit status 1 and one line ending %q", err, stderr, want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %s", d)
			}
		})
	}
	killHolder(t, holder, done, herr)
	if _, err := os.Stat(filepath.Join(run, ".lock")); err != nil {
		t.Fatalf("no lock file left by the killed holder (%v): the test proves nothing", err)
	}
	if _, errs, code := runCLI(t, "train", "--resume", "--train", data, "--out", run); code != 0 {
		t.Fatalf("resume after kill -9: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(run, ".lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file outlived the run: %v", err)
	}
}

// TestSweepHeldCell: a cell that another sweep process runs (sweep --cell,
// as a Slurm task would) is refused to a manual train --resume, shown as
// running by --status, and skipped by a local sweep on the same OUT, which
// finishes the other cell and exits with status 0, the held cell not
// failed. Once the holder is killed with SIGKILL, the same sweep finishes
// the held cell.
func TestSweepHeldCell(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1,2", 40, 5)
	out := filepath.Join(dir, "out")
	cell := filepath.Join(out, sweep.CellsDir, "d.transformer.seed1")
	holder, done, herr := startHolder(t, cell, []string{"sweep", "--file", spec, "--out", out, "--cell", "d.transformer.seed1"}, "250ms")
	held := fmt.Sprintf("run folder %s is in use by PID %d (compbench sweep)", cell, holder.Process.Pid)

	_, errs, code := runCLI(t, "train", "--resume", "--train", tinyData(t), "--out", cell)
	if code != 1 || !strings.Contains(errs, held) {
		t.Errorf("train --resume on the held cell: exit %d, %q; want 1 and %q", code, errs, held)
	}
	stdout, _, _ := runCLI(t, "sweep", "--status", out)
	if want := fmt.Sprintf("running (PID %d (compbench sweep))", holder.Process.Pid); !strings.Contains(stdout, want) {
		t.Errorf("--status:\n%s\nwant the held cell %s", stdout, want)
	}
	var so, se bytes.Buffer
	err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local"}, &so, &se)
	if err != nil || !strings.Contains(se.String(), "cell d.transformer.seed1 skipped: "+held) ||
		!strings.Contains(so.String(), "1 of 2 cells finished; 1 are held by other processes") {
		t.Errorf("local sweep beside the holder: %v\nstdout %s\nstderr %s", err, &so, &se)
	}
	if st := sweep.StateOf(cell); st == sweep.Failed {
		t.Errorf("the held cell is %s", st)
	}
	if st := sweep.StateOf(filepath.Join(out, sweep.CellsDir, "d.transformer.seed2")); st != sweep.Finished {
		t.Errorf("the other cell is %s, want %s", st, sweep.Finished)
	}
	killHolder(t, holder, done, herr)
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("sweep after the holder's kill -9: %v", err)
	}
	if st := sweep.StateOf(cell); st != sweep.Finished {
		t.Errorf("the held cell is %s after the holder died, want %s", st, sweep.Finished)
	}
}
