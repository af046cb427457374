package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"compbench/sweep"
)

// slurmCluster starts scripts/slurm_test_cluster.sh's single-node cluster
// in a temporary folder for the test, and stops it (by its PIDs) after.
// It skips the test, saying why, where the cluster cannot run here.
func slurmCluster(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the test Slurm cluster runs its daemons as root; run as root to test --slurm on a real cluster")
	}
	for _, b := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not found: make sweep-deps installs Debian's slurm-wlm and munge", b)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "slurm_test_cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Cleanup(func() {
		if b, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping the cluster: %v\n%s", err, b)
		}
	})
	if b, err := exec.Command(script, "start", dir).CombinedOutput(); err != nil {
		t.Fatalf("starting the test cluster: %v\n%s", err, b)
	}
	t.Setenv("SLURM_CONF", filepath.Join(dir, "slurm.conf"))
}

// waitCells waits until every cell of the sweep in out is finished or
// failed and returns how many failed, with their error.txt.
func waitCells(t *testing.T, out string, cells []sweep.Cell, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		done, failed := 0, ""
		for _, c := range cells {
			switch sweep.StateOf(c.Dir(out)) {
			case sweep.Finished:
				done++
			case sweep.Failed:
				b, _ := os.ReadFile(filepath.Join(c.Dir(out), sweep.ErrorFile))
				failed += c.Name + ": " + string(b) + "\n"
			}
		}
		if failed != "" {
			t.Fatalf("cells failed:\n%s", failed)
		}
		if done == len(cells) {
			return
		}
		if time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(out, "slurm", "*.out"))
			var b strings.Builder
			for _, l := range logs {
				s, _ := os.ReadFile(l)
				b.WriteString(l + ":\n" + string(s))
			}
			st, _ := exec.Command("squeue").CombinedOutput()
			t.Fatalf("%d of %d cells finished after %s\nsqueue:\n%s\n%s", done, len(cells), limit, st, b.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSweepSlurm runs a 2 models x 2 seeds sweep as a job array on a real
// single-node Slurm cluster and checks the report's n=2 per cell group;
// then it stops a training array task with SIGTERM (scancel, as for a
// preemption or a time limit), resubmits, and checks that the cell
// resumed and ended with the bytes of an uninterrupted local run.
func TestSweepSlurm(t *testing.T) {
	slurmCluster(t)
	sweepEnv(t)
	t.Run("grid", func(t *testing.T) {
		dir := t.TempDir()
		spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer", "lstm-copy"}, "1,2", 4, 0)
		out := filepath.Join(dir, "out")
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm", "--max-running", "2", "--time", "00:05:00"}, &stdout, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "submitted job") {
			t.Fatalf("no job submitted: %s", stdout.String())
		}
		s, err := sweep.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		waitCells(t, out, s.Cells(), 3*time.Minute)
		var md bytes.Buffer
		if err := run(context.Background(), []string{"report", out}, &md, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| d | transformer | 2 |", "| d | lstm-copy | 2 |"} {
			if !strings.Contains(md.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, md.String())
			}
		}
		stdout.Reset()
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), "nothing to submit") {
			t.Errorf("resubmitting a finished sweep: %v, %s", err, stdout.String())
		}
	})
	t.Run("preempt-resume", func(t *testing.T) {
		dir := t.TempDir()
		spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "3", 300, 25)
		ref, out := filepath.Join(dir, "ref"), filepath.Join(dir, "out")
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", ref, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		s, err := sweep.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		cell := s.Cells()[0]
		// Each step sleeps a little (results are unchanged), so the stop
		// lands mid-training however fast the machine trains.
		t.Setenv("COMPBENCH_TEST_STEP_PAUSE", "10ms")
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		ids, err := os.ReadFile(filepath.Join(out, sweep.JobsFile))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			st, ok, _ := sweep.ReadTrainState(cell.Dir(out))
			if ok && st.Step >= 25 {
				if st.Step >= 300 {
					t.Fatal("training finished before the stop: make it longer")
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the array task wrote no checkpoint in 2 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// SIGTERM to every process of the task, as Slurm sends at a
		// time limit or preemption before it kills.
		if b, err := exec.Command("scancel", "--signal=TERM", "--full", strings.TrimSpace(string(ids))).CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v\n%s", err, b)
		}
		for time.Now().Before(deadline) {
			if q, _ := exec.Command("squeue", "-h", "-j", strings.TrimSpace(string(ids))).Output(); len(bytes.TrimSpace(q)) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if st := sweep.StateOf(cell.Dir(out)); st != sweep.Started {
			t.Fatalf("stopped cell is %s, want %s", st, sweep.Started)
		}
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		waitCells(t, out, s.Cells(), 2*time.Minute)
		log, _ := os.ReadFile(filepath.Join(cell.Dir(out), sweep.LogFile))
		if !strings.Contains(string(log), "--resume") {
			t.Errorf("the cell did not resume:\n%s", log)
		}
		for _, f := range []string{"model.safetensors", "optim.safetensors", "best.safetensors", "state.json", sweep.TestPreds} {
			a, _ := os.ReadFile(filepath.Join(cell.Dir(ref), f))
			b, err := os.ReadFile(filepath.Join(cell.Dir(out), f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s differs from the uninterrupted run's (%v)", f, err)
			}
		}
	})
}
