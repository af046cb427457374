package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"compbench/data"
	"compbench/train"
)

// stopGrace is how long a stage may take to stop after SIGTERM (its last
// checkpoint is on disk already) before it is killed.
const stopGrace = 30 * time.Second

// trainSecondsFile accumulates the training stage's wall time over the
// invocations that ran it.
const trainSecondsFile = "train-seconds.txt"

// Runner runs the stages of cells as compbench subprocesses: each is an
// ordinary process that a signal or Slurm can stop, and train's own
// --resume continues a half-finished cell. Its Run is a RunCell.
type Runner struct {
	Spec *Spec
	// Out is the sweep's output folder, holding CellsDir.
	Out string
	// Self is the compbench binary the stages run.
	Self string
	// lock is the cell folder's lock while one cell runs (see Run).
	lock *train.RunLock
}

// cellFiles are a cell's data files.
type cellFiles struct{ train, dev, test, finetune, split string }

// Run runs cell c's stages that are not done yet, then writes result.json.
// A failure is recorded in the cell's error.txt with its log's tail. A
// cell another process holds is left to it: the error is a
// *train.BusyError, and no error.txt is written.
func (r *Runner) Run(ctx context.Context, c Cell) error {
	dir := c.Dir(r.Out)
	// The cell folder is a run folder: one writer at a time, whether a
	// second sweep on the same OUT, a resubmitted array task or a manual
	// train --resume. The stages run under this lock (stage passes it
	// down), so it is held for the cell's whole pipeline.
	lock, err := train.LockRun(dir)
	if err != nil {
		return fmt.Errorf("cell %s: %w", c.Name, err)
	}
	defer lock.Unlock()
	if StateOf(dir) == Finished {
		return nil // finished by another process since the sweep looked
	}
	one := *r
	one.lock = lock
	err = one.stages(ctx, c, dir)
	if err != nil && ctx.Err() == nil {
		msg := err.Error() + "\n\n" + tail(filepath.Join(dir, LogFile), 40)
		if werr := writeFile(filepath.Join(dir, ErrorFile), []byte(msg)); werr != nil {
			return fmt.Errorf("%w (and writing %s: %v)", err, ErrorFile, werr)
		}
	}
	return err
}

func (r *Runner) stages(ctx context.Context, c Cell, dir string) error {
	if err := r.begin(c, dir); err != nil {
		return err
	}
	f, err := r.data(ctx, c, dir)
	if err != nil {
		return err
	}
	if err := r.train(ctx, c, dir, f); err != nil {
		return err
	}
	if err := r.predictEval(ctx, dir, f.test); err != nil {
		return err
	}
	if err := r.easiness(ctx, dir, f); err != nil {
		return err
	}
	if err := r.finetune(ctx, dir, f); err != nil {
		return err
	}
	return r.finish(c, dir, f)
}

// begin clears a failed attempt's error.txt and writes cell.json and the
// train stage's --config file.
func (r *Runner) begin(c Cell, dir string) error {
	if err := os.Remove(filepath.Join(dir, ErrorFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cb, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, CellFile), append(cb, '\n')); err != nil {
		return err
	}
	cfg, err := r.Spec.TrainConfig(c)
	if err != nil {
		return fmt.Errorf("cell %s: %w", c.Name, err)
	}
	return writeFile(filepath.Join(dir, ConfigPatch), cfg)
}

// easiness computes the test examples' predicted easiness, when the sweep
// asks for it.
func (r *Runner) easiness(ctx context.Context, dir string, f cellFiles) error {
	if !r.Spec.Easiness || data.Exists(filepath.Join(dir, EasinessFile)) {
		return nil
	}
	args := []string{"easiness", "--train", f.train, "--test", f.test, "--out", filepath.Join(dir, EasinessFile), "--force"}
	if r.Spec.EasinessTree != "" {
		args = append(args, "--tree", r.Spec.EasinessTree)
	}
	_, err := r.stage(ctx, dir, args...)
	return err
}

// finetune fine-tunes the trained run on the few-shot set into FinetuneDir
// and predicts the test set again, when the sweep and the data have one.
func (r *Runner) finetune(ctx context.Context, dir string, f cellFiles) error {
	ft := r.Spec.Finetune
	if ft == nil || f.finetune == "" {
		return nil
	}
	ftDir := filepath.Join(dir, FinetuneDir)
	if !data.Exists(filepath.Join(ftDir, TestPreds)) {
		args := []string{"finetune", "--run", dir, "--data", f.finetune, "--out", ftDir, "--steps", strconv.Itoa(ft.Steps), "--force"}
		if ft.LR > 0 {
			args = append(args, "--lr", strconv.FormatFloat(ft.LR, 'g', -1, 64))
		}
		if _, err := r.stage(ctx, dir, r.device(args)...); err != nil {
			return err
		}
	}
	return r.predictEval(ctx, ftDir, f.test)
}

// finish writes result.json, which marks the cell finished, then drops
// generated data the sweep discards.
func (r *Runner) finish(c Cell, dir string, f cellFiles) error {
	res, err := r.result(c, dir, f)
	if err != nil {
		return fmt.Errorf("cell %s: result: %w", c.Name, err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, ResultFile), append(b, '\n')); err != nil {
		return err
	}
	if c.Task != "" && r.Spec.Generate.Discard {
		return os.RemoveAll(filepath.Join(dir, DataDir))
	}
	return nil
}

// device adds the sweep's --device to a stage's arguments.
func (r *Runner) device(args []string) []string {
	if r.Spec.Device == "" {
		return args
	}
	return append(args, "--device", r.Spec.Device)
}

// data returns the cell's files, generating them first for a task.
func (r *Runner) data(ctx context.Context, c Cell, dir string) (cellFiles, error) {
	if c.Task == "" {
		d, ok := r.Spec.Dataset(c)
		if !ok {
			return cellFiles{}, fmt.Errorf("cell %s: no dataset %q in the sweep file", c.Name, c.Data)
		}
		return cellFiles{d.Train, d.Dev, d.Test, d.Finetune, d.Split}, nil
	}
	dd := filepath.Join(dir, DataDir)
	f := cellFiles{train: filepath.Join(dd, "train.jsonl"), dev: filepath.Join(dd, "dev.jsonl"),
		test: filepath.Join(dd, "test.jsonl"), finetune: filepath.Join(dd, "finetune.jsonl")}
	if !data.Exists(f.test) {
		if _, err := r.stage(ctx, dir, r.genArgs(c.Task, dd)...); err != nil {
			return f, err
		}
	}
	if !data.Exists(f.dev) {
		f.dev = ""
	}
	if !data.Exists(f.finetune) {
		f.finetune = ""
	}
	return f, nil
}

// genArgs is the compbench gen command line of a task's data in dd.
func (r *Runner) genArgs(task, dd string) []string {
	g := r.Spec.Generate
	domain := g.Domain
	if domain == "" {
		domain = "scan"
	}
	seed := g.Seed
	if seed == 0 {
		seed = 1
	}
	args := []string{"gen", domain, "--task", task, "--out", dd, "--seed", strconv.FormatUint(seed, 10), "--force"}
	for _, s := range []struct {
		flag string
		n    int
	}{{"--train-size", g.TrainSize}, {"--dev-size", g.DevSize}, {"--test-size", g.TestSize}, {"--finetune-size", g.FinetuneSize}} {
		if s.n > 0 {
			args = append(args, s.flag, strconv.Itoa(s.n))
		}
	}
	return args
}

// train trains the cell's run in its folder: skipped when finished,
// resumed from its last checkpoint when started, else started afresh
// (--force clears what a process killed before its first checkpoint left).
func (r *Runner) train(ctx context.Context, c Cell, dir string, f cellFiles) error {
	st, ok, err := ReadTrainState(dir)
	if err != nil {
		return err
	}
	args := []string{"train", "--train", f.train, "--out", dir}
	if f.dev != "" {
		args = append(args, "--dev", f.dev)
	}
	if ok || train.CheckpointPending(dir) {
		cfg, err := train.LoadConfig(filepath.Join(dir, train.ConfigFile), train.DefaultConfig())
		if err != nil {
			return err
		}
		if ok && st.Step >= cfg.Steps && !st.EvalPending && !train.CheckpointPending(dir) {
			return nil
		}
		args = append(args, "--resume")
	} else {
		args = append(args, "--model", c.Variant)
		if p := r.Spec.CellPreset(c); p != "" {
			args = append(args, "--preset", p)
		}
		args = append(args, "--config", filepath.Join(dir, ConfigPatch),
			"--seed", strconv.FormatUint(c.Seed, 10), "--force")
	}
	start := time.Now()
	_, err = r.stage(ctx, dir, r.device(args)...)
	secs := readSeconds(filepath.Join(dir, trainSecondsFile)) + time.Since(start).Seconds()
	if werr := writeFile(filepath.Join(dir, trainSecondsFile), []byte(strconv.FormatFloat(secs, 'f', 3, 64)+"\n")); werr != nil && err == nil {
		err = werr
	}
	return err
}

// predictEval decodes the test set with the run in runDir and scores it,
// each step skipped when its output exists.
func (r *Runner) predictEval(ctx context.Context, runDir, test string) error {
	preds := filepath.Join(runDir, TestPreds)
	if !data.Exists(preds) {
		args := []string{"predict", "--run", runDir, "--in", test, "--out", preds}
		if r.Spec.Beam > 1 {
			args = append(args, "--beam", strconv.Itoa(r.Spec.Beam))
		}
		if r.Spec.Last {
			args = append(args, "--last")
		}
		if _, err := r.stage(ctx, runDir, r.device(args)...); err != nil {
			return err
		}
	}
	evals := []struct {
		file    string
		execute bool
	}{{TestEval, false}}
	if r.Spec.Execute {
		evals = append(evals, struct {
			file    string
			execute bool
		}{"test.exec.json", true})
	}
	for _, e := range evals {
		path := filepath.Join(runDir, e.file)
		if data.Exists(path) {
			continue
		}
		args, err := r.evalArgs(runDir, test, preds, e.execute)
		if err != nil {
			return err
		}
		out, err := r.stage(ctx, runDir, args...)
		if err != nil {
			return err
		}
		if err := writeFile(path, out); err != nil {
			return err
		}
	}
	return nil
}

// evalArgs is the compbench eval command line scoring preds against test:
// exact match, or with execute execution accuracy.
func (r *Runner) evalArgs(runDir, test, preds string, execute bool) ([]string, error) {
	args := []string{"eval", "--gold", test, "--pred", preds, "--json", "--force"}
	if execute {
		return append(args, "--execute"), nil
	}
	// Test sets whose records name their case (COGS's gen.tsv) are scored
	// per case too, for report's per-case table.
	cat, err := categorized(test)
	if err != nil {
		return nil, err
	}
	if cat {
		args = append(args, "--by", "category")
	}
	if r.Spec.Easiness && filepath.Base(runDir) != FinetuneDir {
		args = append(args, "--per-example", filepath.Join(runDir, ExamplesFile))
	}
	return args, nil
}

// stage runs compbench with args, its stderr appended to the cell's log;
// it returns the stdout. Cancelling ctx sends SIGTERM, as Ctrl-C or Slurm
// would, and waits stopGrace before killing.
func (r *Runner) stage(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cellDir := dir
	if filepath.Base(dir) == FinetuneDir {
		cellDir = filepath.Dir(dir)
	}
	logf, err := os.OpenFile(filepath.Join(cellDir, LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n$ compbench %s\n", strings.Join(args, " "))
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, r.Self, args...)
	cmd.Stdout, cmd.Stderr = &stdout, logf
	if r.lock != nil {
		// The cell's lock, inherited as descriptor 3: train (and any
		// stage writing the cell's run folder) works under it.
		cmd.ExtraFiles = []*os.File{r.lock.File()}
		cmd.Env = append(os.Environ(), train.LockFDEnv+"=3")
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("compbench %s: stopped: %w", args[0], ctx.Err())
		}
		return nil, fmt.Errorf("compbench %s: %w (log: %s)", args[0], err, logf.Name())
	}
	if args[0] != "eval" {
		logf.Write(stdout.Bytes())
	}
	return stdout.Bytes(), nil
}

// RunCell runs the one cell c, what each Slurm array task does: a cell
// finished already, or held by another process (which runs it), is noted
// on status and is no failure.
func (r *Runner) RunCell(ctx context.Context, c Cell, status io.Writer) error {
	if StateOf(c.Dir(r.Out)) == Finished {
		fmt.Fprintf(status, "sweep: cell %s is finished already\n", c.Name)
		return nil
	}
	err := r.Run(ctx, c)
	var busy *train.BusyError
	if errors.As(err, &busy) {
		fmt.Fprintf(status, "sweep: cell %s skipped: %v\n", c.Name, busy)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sweep: cell %s: %w", c.Name, err)
	}
	return nil
}
