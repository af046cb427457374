package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSweepFileModesFollowUmask: the files sweep and report write are
// readable as the umask allows (0666 less the umask), not 0600; the
// stages' subprocesses inherit the umask.
func TestSweepFileModesFollowUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o027} {
		t.Run(os.FileMode(umask).String(), func(t *testing.T) {
			old := syscall.Umask(umask)
			t.Cleanup(func() { syscall.Umask(old) })
			dir := t.TempDir()
			out, cell := reportSweep(t, dir)
			dry := filepath.Join(dir, "dry")
			spec := filepath.Join(dir, "sweep.json")
			if _, errs, code := runCLI(t, "sweep", "--file", spec, "--out", dry, "--slurm", "--dry-run"); code != 0 {
				t.Fatalf("sweep --dry-run: exit %d: %s", code, errs)
			}
			files := []string{filepath.Join(out, "sweep.json"), filepath.Join(cell, "result.json"), filepath.Join(cell, "cell.json"),
				filepath.Join(cell, "test.eval.json"), filepath.Join(dry, "sweep.json"), filepath.Join(dry, "sweep.sbatch")}
			if umask == 0o022 {
				// report writes through data.OutputSet, as every other
				// command: 0644.
				page := filepath.Join(dir, "report.md")
				if _, errs, code := runCLI(t, "report", out, "--out", page); code != 0 {
					t.Fatalf("report: exit %d: %s", code, errs)
				}
				files = append(files, page)
			}
			want := os.FileMode(0o666 &^ umask)
			for _, f := range files {
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != want {
					t.Errorf("%s: mode %v, want %v", f, st.Mode().Perm(), want)
				}
			}
		})
	}
}
