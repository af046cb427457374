package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"compbench/data"
	"compbench/data/split"
	"compbench/eval"
	"compbench/sweep"
	"compbench/train"
)

// stopGrace is how long a stage may take to stop after SIGTERM (its last
// checkpoint is on disk already) before it is killed.
const stopGrace = 30 * time.Second

// trainSecondsFile accumulates the training stage's wall time over the
// invocations that ran it.
const trainSecondsFile = "train-seconds.txt"

// cellRunner runs the stages of cells as compbench subprocesses: each is an
// ordinary process that a signal or Slurm can stop, and train's own
// --resume continues a half-finished cell.
type cellRunner struct {
	spec *sweep.Spec
	out  string
	// self is the compbench binary.
	self string
	// lock is the cell folder's lock while one cell runs (see run).
	lock *train.RunLock
}

// cellFiles are a cell's data files.
type cellFiles struct{ train, dev, test, finetune, split string }

// run runs cell c's stages that are not done yet, then writes result.json.
// A failure is recorded in the cell's error.txt with its log's tail. A
// cell another process holds is left to it: the error is a
// *train.BusyError, and no error.txt is written.
func (r *cellRunner) run(ctx context.Context, c sweep.Cell) error {
	dir := c.Dir(r.out)
	// The cell folder is a run folder: one writer at a time, whether a
	// second sweep on the same OUT, a resubmitted array task or a manual
	// train --resume. The stages run under this lock (stage passes it
	// down), so it is held for the cell's whole pipeline.
	lock, err := train.LockRun(dir)
	if err != nil {
		return fmt.Errorf("cell %s: %w", c.Name, err)
	}
	defer lock.Unlock()
	if sweep.StateOf(dir) == sweep.Finished {
		return nil // finished by another process since the sweep looked
	}
	one := *r
	one.lock = lock
	err = one.stages(ctx, c, dir)
	if err != nil && ctx.Err() == nil {
		msg := err.Error() + "\n\n" + tail(filepath.Join(dir, sweep.LogFile), 40)
		if werr := writeAtomic(filepath.Join(dir, sweep.ErrorFile), []byte(msg)); werr != nil {
			return fmt.Errorf("%w (and writing %s: %v)", err, sweep.ErrorFile, werr)
		}
	}
	return err
}

func (r *cellRunner) stages(ctx context.Context, c sweep.Cell, dir string) error {
	if err := os.Remove(filepath.Join(dir, sweep.ErrorFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cb, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, sweep.CellFile), append(cb, '\n')); err != nil {
		return err
	}
	cfg, err := r.spec.TrainConfig(c)
	if err != nil {
		return fmt.Errorf("cell %s: %w", c.Name, err)
	}
	if err := writeAtomic(filepath.Join(dir, sweep.ConfigPatch), cfg); err != nil {
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
	if r.spec.Easiness && !exists(filepath.Join(dir, sweep.EasinessFile)) {
		args := []string{"easiness", "--train", f.train, "--test", f.test, "--out", filepath.Join(dir, sweep.EasinessFile), "--force"}
		if r.spec.EasinessTree != "" {
			args = append(args, "--tree", r.spec.EasinessTree)
		}
		if _, err := r.stage(ctx, dir, args...); err != nil {
			return err
		}
	}
	if ft := r.spec.Finetune; ft != nil && f.finetune != "" {
		ftDir := filepath.Join(dir, sweep.FinetuneDir)
		if !exists(filepath.Join(ftDir, sweep.TestPreds)) {
			args := []string{"finetune", "--run", dir, "--data", f.finetune, "--out", ftDir, "--steps", strconv.Itoa(ft.Steps), "--force"}
			if ft.LR > 0 {
				args = append(args, "--lr", strconv.FormatFloat(ft.LR, 'g', -1, 64))
			}
			if _, err := r.stage(ctx, dir, r.device(args)...); err != nil {
				return err
			}
		}
		if err := r.predictEval(ctx, ftDir, f.test); err != nil {
			return err
		}
	}
	res, err := r.result(c, dir, f)
	if err != nil {
		return fmt.Errorf("cell %s: result: %w", c.Name, err)
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, sweep.ResultFile), append(b, '\n')); err != nil {
		return err
	}
	if c.Task != "" && r.spec.Generate.Discard {
		return os.RemoveAll(filepath.Join(dir, sweep.DataDir))
	}
	return nil
}

// device adds the sweep's --device to a stage's arguments.
func (r *cellRunner) device(args []string) []string {
	if r.spec.Device == "" {
		return args
	}
	return append(args, "--device", r.spec.Device)
}

// data returns the cell's files, generating them first for a task.
func (r *cellRunner) data(ctx context.Context, c sweep.Cell, dir string) (cellFiles, error) {
	if c.Task == "" {
		d, ok := r.spec.Dataset(c)
		if !ok {
			return cellFiles{}, fmt.Errorf("cell %s: no dataset %q in the sweep file", c.Name, c.Data)
		}
		return cellFiles{d.Train, d.Dev, d.Test, d.Finetune, d.Split}, nil
	}
	g := r.spec.Generate
	dd := filepath.Join(dir, sweep.DataDir)
	f := cellFiles{train: filepath.Join(dd, "train.jsonl"), dev: filepath.Join(dd, "dev.jsonl"),
		test: filepath.Join(dd, "test.jsonl"), finetune: filepath.Join(dd, "finetune.jsonl")}
	if !exists(f.test) {
		domain := g.Domain
		if domain == "" {
			domain = "scan"
		}
		seed := g.Seed
		if seed == 0 {
			seed = 1
		}
		args := []string{"gen", domain, "--task", c.Task, "--out", dd, "--seed", strconv.FormatUint(seed, 10), "--force"}
		for _, s := range []struct {
			flag string
			n    int
		}{{"--train-size", g.TrainSize}, {"--dev-size", g.DevSize}, {"--test-size", g.TestSize}, {"--finetune-size", g.FinetuneSize}} {
			if s.n > 0 {
				args = append(args, s.flag, strconv.Itoa(s.n))
			}
		}
		if _, err := r.stage(ctx, dir, args...); err != nil {
			return f, err
		}
	}
	if !exists(f.dev) {
		f.dev = ""
	}
	if !exists(f.finetune) {
		f.finetune = ""
	}
	return f, nil
}

// train trains the cell's run in its folder: skipped when finished,
// resumed from its last checkpoint when started, else started afresh
// (--force clears what a process killed before its first checkpoint left).
func (r *cellRunner) train(ctx context.Context, c sweep.Cell, dir string, f cellFiles) error {
	st, ok, err := sweep.ReadTrainState(dir)
	if err != nil {
		return err
	}
	args := []string{"train", "--train", f.train, "--out", dir}
	if f.dev != "" {
		args = append(args, "--dev", f.dev)
	}
	if ok || exists(filepath.Join(dir, ".checkpoint-pending")) {
		cfg, err := train.LoadConfig(filepath.Join(dir, train.ConfigFile), train.DefaultConfig())
		if err != nil {
			return err
		}
		if ok && st.Step >= cfg.Steps && !st.EvalPending && !exists(filepath.Join(dir, ".checkpoint-pending")) {
			return nil
		}
		args = append(args, "--resume")
	} else {
		args = append(args, "--model", c.Variant)
		if p := r.spec.CellPreset(c); p != "" {
			args = append(args, "--preset", p)
		}
		args = append(args, "--config", filepath.Join(dir, sweep.ConfigPatch),
			"--seed", strconv.FormatUint(c.Seed, 10), "--force")
	}
	args = r.device(args)
	start := time.Now()
	_, err = r.stage(ctx, dir, args...)
	secs := readSeconds(filepath.Join(dir, trainSecondsFile)) + time.Since(start).Seconds()
	if werr := writeAtomic(filepath.Join(dir, trainSecondsFile), []byte(strconv.FormatFloat(secs, 'f', 3, 64)+"\n")); werr != nil && err == nil {
		err = werr
	}
	return err
}

// predictEval decodes the test set with the run in runDir and scores it,
// each step skipped when its output exists.
func (r *cellRunner) predictEval(ctx context.Context, runDir, test string) error {
	preds := filepath.Join(runDir, sweep.TestPreds)
	if !exists(preds) {
		args := []string{"predict", "--run", runDir, "--in", test, "--out", preds}
		if r.spec.Beam > 1 {
			args = append(args, "--beam", strconv.Itoa(r.spec.Beam))
		}
		if r.spec.Last {
			args = append(args, "--last")
		}
		if _, err := r.stage(ctx, runDir, r.device(args)...); err != nil {
			return err
		}
	}
	evals := []struct {
		file  string
		extra []string
	}{{sweep.TestEval, nil}}
	if r.spec.Execute {
		evals = append(evals, struct {
			file  string
			extra []string
		}{"test.exec.json", []string{"--execute"}})
	}
	for _, e := range evals {
		path := filepath.Join(runDir, e.file)
		if exists(path) {
			continue
		}
		args := append([]string{"eval", "--gold", test, "--pred", preds, "--json", "--force"}, e.extra...)
		if e.extra == nil {
			// Test sets whose records name their case (COGS's gen.tsv)
			// are scored per case too, for report's per-case table.
			cat, err := categorized(test)
			if err != nil {
				return err
			}
			if cat {
				args = append(args, "--by", "category")
			}
		}
		if r.spec.Easiness && e.extra == nil && filepath.Base(runDir) != sweep.FinetuneDir {
			args = append(args, "--per-example", filepath.Join(runDir, sweep.ExamplesFile))
		}
		out, err := r.stage(ctx, runDir, args...)
		if err != nil {
			return err
		}
		if err := writeAtomic(path, out); err != nil {
			return err
		}
	}
	return nil
}

// stage runs compbench with args, its stderr appended to the cell's log;
// it returns the stdout. Cancelling ctx sends SIGTERM, as Ctrl-C or Slurm
// would, and waits stopGrace before killing.
func (r *cellRunner) stage(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cellDir := dir
	if filepath.Base(dir) == sweep.FinetuneDir {
		cellDir = filepath.Dir(dir)
	}
	logf, err := os.OpenFile(filepath.Join(cellDir, sweep.LogFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n$ compbench %s\n", strings.Join(args, " "))
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, r.self, args...)
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

// result gathers the finished stages' outputs into result.json.
func (r *cellRunner) result(c sweep.Cell, dir string, f cellFiles) (*sweep.Result, error) {
	res := &sweep.Result{Cell: c, DevEM: -1}
	st, _, err := sweep.ReadTrainState(dir)
	if err != nil {
		return nil, err
	}
	res.Steps, res.BestStep = st.Step, st.BestStep
	if f.dev != "" {
		res.DevEM = st.BestEM
	}
	res.TrainLoss = lastLoss(filepath.Join(dir, train.MetricsFile))
	res.TrainSeconds = readSeconds(filepath.Join(dir, trainSecondsFile))
	sum, err := readSummary(filepath.Join(dir, sweep.TestEval))
	if err != nil {
		return nil, err
	}
	res.TestEM, res.ByCategory = sum.Accuracy, sum.ByCategory
	if r.spec.Execute {
		v, err := readAccuracy(filepath.Join(dir, "test.exec.json"))
		if err != nil {
			return nil, err
		}
		res.TestExec = &v
	}
	ftDir := filepath.Join(dir, sweep.FinetuneDir)
	if exists(filepath.Join(ftDir, sweep.TestEval)) {
		v, err := readAccuracy(filepath.Join(ftDir, sweep.TestEval))
		if err != nil {
			return nil, err
		}
		res.FewShotEM = &v
		if r.spec.Execute {
			v, err := readAccuracy(filepath.Join(ftDir, "test.exec.json"))
			if err != nil {
				return nil, err
			}
			res.FewShotExec = &v
		}
	}
	if auc, _, ok, err := sweep.EasinessROC(dir); err != nil {
		return nil, err
	} else if ok {
		res.EasinessAUC = &auc
	}
	if f.split != "" {
		b, err := data.ReadFileLimit(f.split, data.SplitFile)
		if err != nil {
			return nil, err
		}
		var sf struct {
			Stats split.Stats `json:"stats"`
		}
		if err := json.Unmarshal(b, &sf); err != nil {
			return nil, fmt.Errorf("%s: %w", f.split, err)
		}
		res.CompoundDivergence = sf.Stats.CompoundDivergence
	}
	return res, nil
}

func readAccuracy(path string) (float64, error) {
	s, err := readSummary(path)
	if err != nil {
		return 0, err
	}
	return s.Accuracy, nil
}

// readSummary reads compbench eval --json's summary.
func readSummary(path string) (*eval.Summary, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, err
	}
	var s eval.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// categorized reports whether every record of the test file names its
// category (and there is at least one).
func categorized(path string) (bool, error) {
	recs, err := data.ReadRecords(path)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if r.Category == "" {
			return false, nil
		}
	}
	return len(recs) > 0, nil
}

// lastLoss is the training loss of metrics.jsonl's last training line.
func lastLoss(path string) float64 {
	b, _ := data.ReadFileLimit(path, data.MetricsFile)
	loss := 0.0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var m struct {
			Loss *float64 `json:"loss"`
		}
		if json.Unmarshal(line, &m) == nil && m.Loss != nil {
			loss = *m.Loss
		}
	}
	return loss
}

func readSeconds(path string) float64 {
	b, _ := data.ReadFileLimit(path, data.ConfigFile)
	v, _ := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	return v
}

// tailBytes bounds what tail reads: a cell's log may be long.
const tailBytes = 64 << 10

// tail is the last n lines of a file, within its last tailBytes.
func tail(path string, n int) string {
	var b []byte
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > tailBytes {
			f.Seek(-tailBytes, io.SeekEnd)
		}
		b, _ = io.ReadAll(io.LimitReader(f, tailBytes))
		f.Close()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeAtomic writes a file by renaming a complete temporary over it, so a
// reader (the report, a resumed sweep) never sees half of it. The
// temporary is created with mode 0666 less the umask, as os.WriteFile
// would (os.CreateTemp's 0600 would hide the results from the lab).
func writeAtomic(path string, b []byte) error {
	var tmp *os.File
	for tries := 0; ; tries++ {
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp"+strconv.FormatUint(rand.Uint64(), 10))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			tmp = f
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 100 {
			return err
		}
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
