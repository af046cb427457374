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

	"compbench/data"
	"compbench/sweep"
	"compbench/train"
)

// tinySweep is a sweep file over datasets (each name: its train file) of
// one tiny Transformer trained for steps, checkpointed every evalEvery.
func tinySweep(t *testing.T, dir string, datasets map[string]string, models []string, seeds string, steps, evalEvery int) string {
	t.Helper()
	var ds []string
	for name, train := range datasets {
		ds = append(ds, fmt.Sprintf(`{"name":%q,"train":%q,"dev":%q,"test":%q}`, name, train, train, train))
	}
	body := fmt.Sprintf(`{"name":"tiny","models":["%s"],"seeds":[%s],"datasets":[%s],
  "config":{"steps":%d,"eval_every":%d,"batch":4,"bucket_width":4,"lr":0.01,"warmup":10,
    "model":{"layers":1,"heads":2,"dim":16,"mlp_dim":32,"max_src_len":8,"max_tgt_len":10,"dropout":0.1}}}`,
		strings.Join(models, `","`), seeds, strings.Join(ds, ","), steps, evalEvery)
	p := filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepEnv makes the stages, run as os.Executable (the test binary), act
// as compbench, on one thread each.
func sweepEnv(t *testing.T) {
	t.Setenv(asCLIEnv, "1")
	t.Setenv("OPENBLAS_NUM_THREADS", "1")
	t.Setenv("GOMAXPROCS", "1")
}

func tinyData(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("testdata", "train-tiny.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSweepLocal runs 4 cells with --jobs 2, two of them on a training file
// that cannot be read: those fail with error.txt holding the stage's error,
// the others finish, and the exit status counts the failures. Run again,
// the finished cells are skipped and the failed ones retried.
func TestSweepLocal(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := tinySweep(t, dir, map[string]string{"good": tinyData(t), "bad": bad}, []string{"transformer"}, "1,2", 4, 0)
	out := filepath.Join(dir, "out")
	args := []string{"sweep", "--file", spec, "--out", out, "--local", "--jobs", "2"}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 4 cells failed") {
		t.Fatalf("sweep: %v, want 2 of 4 cells failed\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "2 running") {
		t.Errorf("--jobs 2 never ran 2 cells at once:\n%s", stderr.String())
	}
	for _, c := range []struct {
		cell  string
		state sweep.State
		file  string
		want  string
	}{
		{"good.transformer.seed1", sweep.Finished, sweep.ResultFile, `"test_em"`},
		{"good.transformer.seed2", sweep.Finished, sweep.TestEval, `"accuracy"`},
		{"bad.transformer.seed1", sweep.Failed, sweep.ErrorFile, "compbench train"},
		{"bad.transformer.seed2", sweep.Failed, sweep.ErrorFile, "bad.jsonl"},
	} {
		t.Run(c.cell, func(t *testing.T) {
			cd := filepath.Join(out, sweep.CellsDir, c.cell)
			if st := sweep.StateOf(cd); st != c.state {
				t.Errorf("state %s, want %s", st, c.state)
			}
			b, err := os.ReadFile(filepath.Join(cd, c.file))
			if err != nil || !strings.Contains(string(b), c.want) {
				t.Errorf("%s: %q (%v), want %q in it", c.file, b, err, c.want)
			}
		})
	}
	stderr.Reset()
	err = run(context.Background(), args, &stdout, &stderr)
	if err == nil || !strings.Contains(stderr.String(), "2/4 cells done (2 already)") {
		t.Errorf("second run: %v, want the 2 finished cells skipped:\n%s", err, stderr.String())
	}
}

// TestSweepStopResume stops a sweep with SIGTERM while its cell trains,
// checks that the cell is left started (not failed), then runs the sweep
// again: the cell resumes with train --resume and ends with the weights,
// moments and state of an uninterrupted sweep, byte for byte.
func TestSweepStopResume(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "3", 300, 25)
	cellOf := func(out string) string { return filepath.Join(out, sweep.CellsDir, "d.transformer.seed3") }
	ref, out := filepath.Join(dir, "ref"), filepath.Join(dir, "out")
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", ref, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "sweep", "--file", spec, "--out", out, "--local")
	// Each step sleeps a little (results are unchanged), so the stop lands
	// mid-training however fast the machine trains.
	cmd.Env = append(os.Environ(), "COMPBENCH_TEST_STEP_PAUSE=10ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, ok, _ := sweep.ReadTrainState(cellOf(out))
		if ok && st.Step >= 25 {
			if st.Step >= 300 {
				t.Fatal("training finished before the stop: make it longer")
			}
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint after 60 s:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "run the same command again") {
		t.Fatalf("stopped sweep: %v, want exit status 1 and how to continue:\n%s", err, stderr.String())
	}
	if st := sweep.StateOf(cellOf(out)); st != sweep.Started {
		t.Fatalf("stopped cell is %s, want %s", st, sweep.Started)
	}
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(cellOf(out), sweep.LogFile))
	if !strings.Contains(string(log), "--resume") {
		t.Errorf("the cell did not resume:\n%s", log)
	}
	for _, f := range []string{"model.safetensors", "optim.safetensors", "best.safetensors", "state.json", sweep.TestPreds} {
		a, _ := os.ReadFile(filepath.Join(cellOf(ref), f))
		b, err := os.ReadFile(filepath.Join(cellOf(out), f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the uninterrupted sweep's (%v)", f, err)
		}
	}
}

// TestSweepTimeLimit: a local sweep past --time-limit starts no more
// cells and says how to continue (exit status 1); the same command without
// the limit then finishes every cell.
func TestSweepTimeLimit(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)
	out := filepath.Join(dir, "out")
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local", "--time-limit", "1ns"}, &bytes.Buffer{}, &stderr)
	if code := exitCode(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "--time-limit 1ns reached with 0 of 1 cells done; run the same command again") {
		t.Fatalf("exit %d, %q; want 1 and how to continue", code, stderr.String())
	}
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if st := sweep.StateOf(filepath.Join(out, sweep.CellsDir, "d.transformer.seed1")); st != sweep.Finished {
		t.Errorf("cell is %s after the second run, want %s", st, sweep.Finished)
	}
}

// TestSweepUsage: bad command lines and sweep files exit with status 2
// before anything is written.
func TestSweepUsage(t *testing.T) {
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)
	unknown := filepath.Join(dir, "unknown.json")
	if err := os.WriteFile(unknown, []byte(`{"models":["transformer"],"seeds":[1],"tasks":["length"],"sedes":[2]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	preset := filepath.Join(dir, "preset.json")
	if err := os.WriteFile(preset, []byte(`{"models":["transformer"],"seeds":[1],"tasks":["length"],"preset":"gpu-huge"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no mode", []string{"--file", spec, "--out", out}, "one of --local, --slurm and --cell"},
		{"two modes", []string{"--file", spec, "--out", out, "--local", "--slurm"}, "one of --local"},
		{"no out", []string{"--file", spec, "--local"}, "--out are required"},
		{"jobs 0", []string{"--file", spec, "--out", out, "--local", "--jobs", "0"}, "--jobs 0"},
		{"dry-run local", []string{"--file", spec, "--out", out, "--local", "--dry-run"}, "--dry-run goes with --slurm"},
		{"bad time", []string{"--file", spec, "--out", out, "--slurm", "--time", "1h"}, "HH:MM:SS"},
		{"time limit on slurm", []string{"--file", spec, "--out", out, "--slurm", "--time-limit", "9m"}, "with --local"},
		{"negative time limit", []string{"--file", spec, "--out", out, "--local", "--time-limit", "-1s"}, "positive duration"},
		{"unknown key", []string{"--file", unknown, "--out", out, "--local"}, `unknown field "sedes"`},
		{"unknown cell", []string{"--file", spec, "--out", out, "--cell", "nope"}, `no cell named "nope"`},
		{"unknown preset", []string{"--file", preset, "--out", out, "--local"}, `unknown preset "gpu-huge" (known: cpu-small, paper)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(out)
			var stderr bytes.Buffer
			code := exitCode(run(context.Background(), append([]string{"sweep"}, c.args...), &bytes.Buffer{}, &stderr), &stderr)
			if code != 2 || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, %q; want 2 and %q", code, stderr.String(), c.want)
			}
			if data.Exists(out) {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestSweepDryRun: --slurm --dry-run writes OUT/sweep.sbatch over the
// unfinished cells and prints it without calling sbatch.
func TestSweepDryRun(t *testing.T) {
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer", "lstm-copy"}, "1,2", 2, 0)
	out := filepath.Join(dir, "out")
	t.Setenv("PATH", "") // a dry run needs no sbatch
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm", "--dry-run", "--max-running", "2", "--gres", "gpu:1", "--sbatch-arg", "--account=lab"}, &stdout, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "sweep.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0,1,2,3%2", "#SBATCH --gres=gpu:1", "#SBATCH --account=lab", "d.lstm-copy.seed2", "--cell"} {
		if !strings.Contains(string(b), want) || !strings.Contains(stdout.String(), want) {
			t.Errorf("script or output lacks %q:\n%s", want, b)
		}
	}
	err = run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "sbatch not found") {
		t.Errorf("submitting without sbatch: %v, want sbatch not found", err)
	}
}

// TestSweepCellLock: a cell whose run-folder lock another holder has is
// skipped, not run twice at once and not failed: sweep --cell says who
// holds it and exits with status 0, and --status shows it running.
func TestSweepCellLock(t *testing.T) {
	dir := t.TempDir()
	spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)
	out := filepath.Join(dir, "out")
	cell := filepath.Join(out, sweep.CellsDir, "d.transformer.seed1")
	lock, err := train.LockRun(cell)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	var stderr bytes.Buffer
	err = run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--cell", "d.transformer.seed1"}, &bytes.Buffer{}, &stderr)
	want := fmt.Sprintf("sweep: cell d.transformer.seed1 skipped: run folder %s is in use by PID %d", cell, os.Getpid())
	if err != nil || !strings.Contains(stderr.String(), want) {
		t.Errorf("sweep --cell on a held cell: %v, stderr %q; want success and %q", err, stderr.String(), want)
	}
	if data.Exists(filepath.Join(cell, sweep.ErrorFile)) || data.Exists(filepath.Join(cell, sweep.CellFile)) {
		t.Error("a held cell was written to")
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"sweep", "--status", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("running (PID %d", os.Getpid()); !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "0 finished, 1 running,") {
		t.Errorf("--status:\n%s\nwant the cell %s", stdout.String(), want)
	}
}
