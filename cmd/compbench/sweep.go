package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"compbench/progress"
	"compbench/sweep"
)

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep", "sweep --file S --out OUT (--local [--jobs N] | --slurm [flags] | --cell NAME) | sweep --status OUT", `
Run a grid of experiments (a paper's table) described by the sweep file S
(JSON, unknown keys are errors; docs/sweep.md). The cross product of its axes
(tasks or datasets, models, vary, seeds) gives cells; each cell is a run
folder OUT/cells/NAME made by compbench gen, train, predict, finetune and eval
run as subprocesses. A finished cell (result.json) is skipped and a started
one resumes from its last checkpoint, so the same command continues a
stopped sweep. A failed cell leaves error.txt and the others go on; the exit
status is 1 when any failed. A cell another process runs (its folder's lock
held) is skipped, not failed. "compbench report OUT" tabulates the results.

--local runs the cells here, at most --jobs at once. --slurm writes
OUT/sweep.sbatch, a job array with one task per unfinished cell, and submits
it with sbatch (--dry-run prints it instead); each task runs --cell NAME on a
node, which needs this binary and OUT on a shared file system.`, stderr)
	file := fs.String("file", "", "sweep `FILE` (JSON)")
	out := fs.String("out", "", "sweep output `DIR`")
	local := fs.Bool("local", false, "run the cells on this machine")
	jobs := fs.Int("jobs", 1, "cells run at once with --local")
	slurm := fs.Bool("slurm", false, "submit the cells as a Slurm job array")
	cell := fs.String("cell", "", "run the one cell `NAME` (what each Slurm array task does)")
	status := fs.String("status", "", "print the state of each cell of the sweep in `DIR` and exit")
	dry := fs.Bool("dry-run", false, "with --slurm: write and print the sbatch script, do not submit it")
	limit := fs.Duration("time-limit", 0, "with --local: stop at this wall time (e.g. 9m), the running cells at their checkpoints, to continue with the same command (0: none)")
	var sl sweep.Slurm
	slurmFlags(fs, &sl)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("sweep: unexpected argument %q", pos[0])
	}
	if *status != "" {
		return sweepStatus(ctx, *status, stdout)
	}
	switch modes := countTrue(*local, *slurm, *cell != ""); {
	case *file == "" || *out == "":
		return usagef("sweep: --file and --out are required")
	case modes != 1:
		return usagef("sweep: give one of --local, --slurm and --cell")
	case *jobs < 1:
		return usagef("sweep: --jobs %d: want at least 1", *jobs)
	case *dry && !*slurm:
		return usagef("sweep: --dry-run goes with --slurm")
	case *limit < 0 || (*limit > 0 && !*local):
		return usagef("sweep: --time-limit %s: want a positive duration, with --local (on Slurm, --time limits each cell)", *limit)
	}
	if err := sl.Check(); err != nil {
		return usagef("sweep: %v", err)
	}
	if *slurm {
		if err := sweep.CheckOut(*out); err != nil {
			return usagef("sweep: %v", err)
		}
	}
	spec, one, err := loadSweep(*file, *out, *cell)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sweep: finding the compbench binary: %w", err)
	}
	r := &sweep.Runner{Spec: spec, Out: *out, Self: self}
	switch {
	case *cell != "":
		return r.RunCell(ctx, one, stderr)
	case *slurm:
		if err := sweep.SubmitUnfinished(ctx, spec, *out, self, sl, *dry, stdout); err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		return nil
	}
	return sweepLocal(ctx, r, *jobs, *limit, stdout, stderr)
}

// sweepLocal runs the unfinished cells here, at most jobs at once, until
// they are done or limit (0: none) has passed.
func sweepLocal(ctx context.Context, r *sweep.Runner, jobs int, limit time.Duration, stdout, stderr io.Writer) error {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	out := r.Out
	n := sweep.RunLocal(ctx, out, r.Spec.Cells(), jobs, r.Run, progress.To(stderr))
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("sweep: --time-limit %s reached with %d of %d cells done; run the same command again to continue", limit, n.Done, n.Total)
	case ctx.Err() != nil:
		return fmt.Errorf("sweep: stopped with %d of %d cells done; run the same command again to continue", n.Done, n.Total)
	case n.Failed > 0:
		return fmt.Errorf("sweep: %d of %d cells failed (see %s)", n.Failed, n.Total, filepath.Join(out, sweep.CellsDir, "*", sweep.ErrorFile))
	case n.Busy > 0:
		// Not a failure either: the cells are being run, elsewhere.
		fmt.Fprintf(stdout, "sweep: %d of %d cells finished; %d are held by other processes (named above), which run them: compbench sweep --status %s follows them\n",
			n.Done, n.Total, n.Busy, out)
		return nil
	}
	fmt.Fprintf(stdout, "sweep: %d cells finished in %s; compbench report %s tabulates them\n", n.Total, out, out)
	return nil
}

// specError sorts a sweep file's error: a file that cannot be read
// (missing, a folder, unreadable) is a failure, exit status 1; one that
// reads but is wrong is a usage error, status 2.
func specError(prefix string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	return usagef("%s: %v", prefix, err)
}

// sweepStatus prints each cell's state (sweep.PrintStatus) of the sweep
// recorded in out.
func sweepStatus(ctx context.Context, out string, stdout io.Writer) error {
	spec, err := sweep.LoadRecorded(out)
	if err != nil {
		return specError("sweep: --status", err)
	}
	return sweep.PrintStatus(ctx, spec, out, stdout)
}

// checkSweepCells runs, before any cell, the checks of a sweep file that
// need this binary and this machine (sweep.Spec.Validate has checked the
// rest), as usage errors: the device must be one this binary was built
// for, and no cell may outgrow the machine's memory (sweep.Spec.Memory).
func checkSweepCells(spec *sweep.Spec) error {
	if _, err := parseDevice(spec.Device); err != nil {
		return usagef("sweep: %v", err)
	}
	cells, err := spec.Memory()
	for _, c := range cells {
		if err := checkMemory("sweep: cell "+c.Name, memParts(c.Parts...)...); err != nil {
			return err
		}
	}
	if err != nil {
		return usagef("sweep: %v", err)
	}
	return nil
}

// loadSweep reads the sweep file, checks its cells against this binary
// and machine, finds the cell named (if any) and records the sweep in out.
func loadSweep(file, out, cell string) (*sweep.Spec, sweep.Cell, error) {
	var one sweep.Cell
	spec, err := sweep.Load(file)
	if err != nil {
		return nil, one, specError("sweep", err)
	}
	if err := checkSweepCells(spec); err != nil {
		return nil, one, err
	}
	if cell != "" {
		if one, err = spec.Find(cell); err != nil {
			return nil, one, usagef("sweep: --cell: %v", err)
		}
	}
	if err := spec.Record(out); err != nil {
		var other *sweep.OtherSpecError
		if errors.As(err, &other) {
			return nil, one, usagef("sweep: %v", err)
		}
		return nil, one, err
	}
	return spec, one, nil
}

// slurmFlags registers the --slurm job's resource flags.
func slurmFlags(fs *flag.FlagSet, sl *sweep.Slurm) {
	fs.StringVar(&sl.Partition, "partition", "", "Slurm `PARTITION`")
	fs.StringVar(&sl.Gres, "gres", "", "generic resources `GRES` per cell, e.g. gpu:1")
	fs.StringVar(&sl.Time, "time", "", "time limit per cell, `HH:MM:SS` or D-HH:MM:SS")
	fs.StringVar(&sl.Mem, "mem", "", "memory `MEM` per cell, e.g. 16G")
	fs.IntVar(&sl.CPUs, "cpus-per-task", 0, "CPUs per cell (0: the cluster's default)")
	fs.IntVar(&sl.MaxRunning, "max-running", 0, "at most `K` cells running at once (the array's %K; 0: no limit)")
	fs.Var((*listFlag)(&sl.Extra), "sbatch-arg", "one more sbatch `OPTION` (--account=lab), repeatable")
}
