package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/progress"
	"compbench/provenance"
)

// Options are a training run's inputs besides its Config.
type Options struct {
	// Dir is the run folder.
	Dir string
	// Train and Dev are the records; Dev may be empty (then the last
	// checkpoint is also the best).
	Train, Dev []data.Record
	// Resume continues the run in Dir from its last checkpoint.
	Resume bool
	// Data, when set, fingerprints the data files: recorded in a new
	// run's data.json and compared on resume.
	Data []DataFile
	// Provenance, when set, is appended to the run's provenance.jsonl
	// (the build, command line and inputs of this invocation).
	Provenance *provenance.Record
	// AllowDataChange lets a resume continue on data whose fingerprints
	// differ from data.json.
	AllowDataChange bool
	// Force replaces an existing run in Dir.
	Force bool
	// Vocab, when set, is used instead of one built from Train (fine-tuning
	// keeps the vocabulary of the run it starts from).
	Vocab *models.Vocab
	// InitWeights, when set, is a safetensors file to start from.
	InitWeights string
	// Init, when set, may change a new run's initial weights (after
	// InitWeights; not on resume), e.g. to load a pretrained encoder.
	Init func(m models.Model, v *models.Vocab) error
	// LogEvery is the number of steps between metrics lines (0: 100).
	LogEvery int
	// Progress receives the progress bar and warnings (nil: none).
	Progress progress.Reporter
	// TruncationNoted says the caller has already warned, per file, of
	// the training examples the length limits cut: Train then does not
	// repeat it.
	TruncationNoted bool
	// CheckpointEvery, when > 0, adds a checkpoint whenever that much time
	// has passed since the last one, between the --eval-every ones.
	CheckpointEvery time.Duration
	// Lock is the caller's hold on Dir (LockRun), taken before it read
	// anything there; nil: Train takes it for the call.
	Lock *RunLock
	// Backend is where package engine's executor trains and evaluates
	// (weights, gradients and Adam moments stay there between
	// checkpoints); nil is the CPU. A run-time choice: it is not saved in
	// the run's config, and a run may resume on another device.
	Backend engine.Backend
}

// Result summarises a finished run.
type Result struct {
	// Steps done, final training loss (mean over the last log interval).
	Steps     int
	TrainLoss float64
	// Best dev result and its step (DevEM -1 without a dev set).
	BestStep int
	DevEM    float64
	DevLoss  float64
	// Truncated counts over-long training examples cut to the limits.
	Truncated int
	// Elapsed is the wall time of this invocation.
	Elapsed time.Duration
	// Tokens counts the target tokens trained on in this invocation and
	// StepTime the wall time of its training steps, dev evaluations and
	// checkpoints excluded.
	Tokens   int64
	StepTime time.Duration
}

// TokensPerSecond is the training throughput: target tokens per second of
// training steps (0 before any step).
func (r *Result) TokensPerSecond() float64 {
	if r.StepTime <= 0 {
		return 0
	}
	return float64(r.Tokens) / r.StepTime.Seconds()
}

// runFiles are the files a run owns; --force removes exactly these.
var runFiles = []string{ConfigFile, VocabFile, ModelFile, OptimFile, StateFile, BestFile, MetricsFile, DataFileName, ProvenanceFile}

// checkNewDir refuses a folder that holds a run unless force; it writes
// nothing.
func checkNewDir(dir string, force bool) error {
	if force {
		return nil
	}
	for _, f := range append(runFiles, pendingDir) {
		if data.Exists(filepath.Join(dir, f)) {
			return fmt.Errorf("run folder %s already holds a run (%s): use --resume to continue it or --force to replace it", dir, f)
		}
	}
	return nil
}

// prepareDir makes dir ready for a new run: with force it removes the
// run's own files (nothing else in the folder), and the leftovers of a
// killed run.
func prepareDir(dir string, force bool) error {
	if err := checkNewDir(dir, force); err != nil {
		return err
	}
	for _, f := range append(runFiles, pendingDir) {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return removeStale(dir)
}

// resumeDir brings a checked run folder to its resume point: leftovers
// of a killed process removed, a committed checkpoint installed, metrics
// after the checkpoint dropped, changed data recorded.
func resumeDir(dir string, rp *resumePoint) error {
	if err := removeStale(dir); err != nil {
		return err
	}
	if err := installPending(dir); err != nil {
		return err
	}
	// The changes are logged before config.json records them: a process
	// killed in between logs them again on the next resume, never not.
	var resumed []byte
	if len(rp.changes) > 0 {
		ch := make(map[string]any, len(rp.changes))
		for _, c := range rp.changes {
			ch[c.Key] = map[string]json.RawMessage{"from": json.RawMessage(c.From), "to": json.RawMessage(c.To)}
		}
		b, err := json.Marshal(map[string]any{"step": rp.state.Step, "resumed": ch})
		if err != nil {
			return err
		}
		resumed = append(b, '\n')
	}
	if err := trimMetrics(filepath.Join(dir, MetricsFile), rp.state.Step, resumed); err != nil {
		return err
	}
	if len(rp.changes) > 0 {
		if err := replaceSynced(filepath.Join(dir, ConfigFile), bytesFill(rp.config)); err != nil {
			return err
		}
	}
	if rp.data != nil {
		return writeData(dir, rp.data)
	}
	return nil
}

// Train runs (or resumes) training and returns its summary.
func Train(ctx context.Context, cfg Config, o Options) (*Result, error) {
	start := time.Now()
	o.Progress = progress.Or(o.Progress)
	if o.LogEvery <= 0 {
		o.LogEvery = 100
	}
	if len(o.Train) == 0 {
		return nil, errors.New("training data is empty")
	}
	if o.Lock == nil {
		l, err := LockRun(o.Dir)
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	} else if !sameDir(o.Lock.Dir(), o.Dir) {
		return nil, fmt.Errorf("train: the lock held is %s's, not %s's", o.Lock.Dir(), o.Dir)
	}
	// Everything is read and checked before the first write to the run
	// folder, so bad input never costs the user what the folder held.
	var st State
	var rp *resumePoint
	vocab := o.Vocab
	if o.Resume {
		var err error
		if rp, err = readResume(o.Dir, &cfg, &o); err != nil {
			if errors.Is(err, ErrInconsistent) {
				return nil, err // the message leads with what went wrong
			}
			return nil, fmt.Errorf("resume: %w", err)
		}
		vocab, st = rp.vocab, rp.state
		for _, c := range rp.changes {
			if c.Key == "steps" && cfg.Schedule == SchedulePolynomial {
				o.Progress.Notef("warning: the polynomial schedule decays to 0 at the last step: steps 1-%d decayed toward step %s, the rest decay toward step %d; an uninterrupted run of %d steps would differ",
					st.Step, c.From, cfg.Steps, cfg.Steps)
			}
		}
	} else {
		if err := checkNewDir(o.Dir, o.Force); err != nil {
			return nil, err
		}
		if p := cfg.Model.Pretrained; p != "" && !filepath.IsAbs(p) {
			// config.json records the folder from anywhere a resume runs.
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, err
			}
			cfg.Model.Pretrained = abs
		}
		if vocab == nil {
			var err error
			if vocab, err = NewVocab(cfg.Model, o.Train); err != nil {
				return nil, err
			}
		}
		cfg.Model.SrcVocab, cfg.Model.TgtVocab = len(vocab.Source), len(vocab.Target)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var dg digests // what each checkpoint records besides its state
	var err error
	if dg.config, err = configDigest(cfg); err != nil {
		return nil, err
	}
	if o.Resume {
		dg.vocab, dg.data = rp.vocabDigest, rp.dataDigest
	}
	// The model comes before the data is encoded: a pretrained model's
	// vocabulary read back from a run gets its tokenizer here.
	m, err := NewModel(cfg.Model, cfg.Seed, vocab)
	if err != nil {
		return nil, err
	}
	if cfg.Warmup > 0 && cfg.Warmup >= cfg.Steps {
		o.Progress.Notef("warning: warmup %d >= steps %d: the learning rate never reaches its peak %g (it ends at %.2g); set --warmup below --steps, or use --preset cpu-small for a short run",
			cfg.Warmup, cfg.Steps, cfg.LR, cfg.Rate(cfg.Steps))
	}
	enc := cfg.Model.EncodeOptions(cfg.Strict)
	trainEx, stats, err := models.Encode(vocab, o.Train, enc)
	if err != nil {
		return nil, fmt.Errorf("training data: %w", err)
	}
	if stats.Truncated > 0 && !o.TruncationNoted {
		o.Progress.Notef("warning: %d training examples longer than the model's limits (%d source / %d target tokens) were truncated",
			stats.Truncated, cfg.Model.MaxSrcLen, cfg.Model.MaxTgtLen)
	}
	if o.Vocab == nil && vocab.Pretrained != "" && stats.UnknownTgt > 0 {
		o.Progress.Notef("warning: %d target pieces are unknown to the tokenizer of %s (%s): those outputs cannot be produced exactly",
			stats.UnknownTgt, vocab.Pretrained, unknownExample(vocab, o.Train))
	}
	if o.Vocab != nil && stats.UnknownTgt > 0 {
		return nil, fmt.Errorf("vocabulary mismatch: the data has %d target tokens unknown to the model's vocabulary (%s)", stats.UnknownTgt, unknownExample(vocab, o.Train))
	}
	devEnc := enc
	devEnc.Strict = false
	devEx, _, err := models.Encode(vocab, o.Dev, devEnc)
	if err != nil {
		return nil, fmt.Errorf("dev data: %w", err)
	}
	p := m.Params()
	opt := NewAdam(p, cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay)
	initialised := false // the start weights are not the seed's
	if o.Resume {
		// Before the first checkpoint (rp.model "") the run restarts
		// from the seed's initialisation, as it first did.
		if rp.model != "" {
			if err := LoadWeights(rp.model, p); err != nil {
				return nil, fmt.Errorf("resume: %w", err)
			}
			if err := loadOptim(rp.optim, p, opt); err != nil {
				return nil, fmt.Errorf("resume: %w", err)
			}
		}
		opt.T = st.AdamT
	} else {
		if o.InitWeights != "" {
			if err := LoadWeights(o.InitWeights, p); err != nil {
				return nil, err
			}
			initialised = true
		}
		if o.Init != nil {
			if err := o.Init(m, vocab); err != nil {
				return nil, err
			}
			initialised = true
		}
	}
	be := defaultBackend(o.Backend)
	eng, err := bindTrainer(m, be, opt)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	// The first write to the run folder.
	if o.Resume {
		if err := resumeDir(o.Dir, rp); err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
	} else {
		if err := prepareDir(o.Dir, o.Force); err != nil {
			return nil, err
		}
		if err := writeStart(o.Dir, &cfg, vocab, o.Data, p, opt, initialised, &dg); err != nil {
			return nil, err
		}
	}
	if o.Provenance != nil {
		if err := appendProvenance(o.Dir, st.Step, be, o.Provenance); err != nil {
			return nil, err
		}
	}
	mf, err := os.OpenFile(filepath.Join(o.Dir, MetricsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer mf.Close()
	metrics := json.NewEncoder(mf)

	res := &Result{DevEM: -1, BestStep: st.BestStep, Truncated: stats.Truncated}
	if st.BestStep > 0 {
		res.DevEM, res.DevLoss = st.BestEM, st.BestLoss
	}
	device := be.Name()
	o.Progress.Notef("train: engine executor on %s", engine.Describe(be))
	label := "train on " + device
	if st.Step > 0 {
		label = fmt.Sprintf("train (resumed at step %d) on %s", st.Step, device)
	}
	bar := o.Progress.Bar(label, int64(cfg.Steps-st.Step))
	defer bar.Finish()
	bar.SetETAFrom(etaFrom)
	if progressInterval >= 0 {
		bar.SetInterval(progressInterval)
	}
	ep := &epochs{ex: trainEx, cfg: &cfg}
	// The losses since the last metrics line; a checkpoint saves them, so
	// a resumed run's next line has the uninterrupted run's mean.
	sumLoss, nLoss := st.LossSum, st.LossSteps
	var sumTok float64
	tick := time.Now()
	lastGood := "none (no checkpoint written yet)"
	saved, savedAt := st.Step, time.Now() // the last checkpoint
	if st.Step > 0 {
		lastGood = fmt.Sprintf("%s (step %d)", filepath.Join(o.Dir, ModelFile), st.Step)
	}
	checkpoint := func(step int, best bool) error {
		if err := syncHost(eng, opt); err != nil {
			return fmt.Errorf("step %d: checkpoint: %s: %w", step, device, err)
		}
		st.Step, st.AdamT = step, opt.T
		st.LossSum, st.LossSteps = sumLoss, nLoss
		if err := saveCheckpoint(o.Dir, p, opt, st, best, dg); err != nil {
			return err
		}
		lastGood = fmt.Sprintf("%s (step %d)", filepath.Join(o.Dir, ModelFile), step)
		saved, savedAt = step, time.Now()
		return nil
	}
	// stop ends a run cancelled (Ctrl-C, SIGTERM, SIGHUP) after done
	// steps: their weights are checkpointed first, so at most the step in
	// progress is lost. A stop inside the dev evaluation of step done
	// checkpoints with the evaluation pending; --resume runs it first.
	stop := func(at, done int, evalPending bool) error {
		cause, where := ctx.Err(), ""
		if evalPending {
			where = " (dev evaluation)"
		}
		if done > saved || evalPending {
			st.EvalPending = evalPending
			if err := checkpoint(done, false); err != nil {
				return fmt.Errorf("interrupted at step %d%s; the checkpoint of step %d failed (%v); last checkpoint: %s: %w", at, where, done, err, lastGood, cause)
			}
		}
		if done == 0 {
			return fmt.Errorf("interrupted at step %d%s, before any checkpoint; --resume starts the run again: %w", at, where, cause)
		}
		return fmt.Errorf("interrupted at step %d%s; checkpoint %s; --resume continues from it: %w", at, where, lastGood, cause)
	}
	// evaluate scores the dev set after step, keeps the best weights and
	// checkpoints.
	evaluate := func(step int) error {
		best := false // without a dev set no step is evaluated, none is best
		if len(devEx) > 0 {
			if evalHook != nil {
				evalHook(step)
			}
			sub := bar.Sub(fmt.Sprintf("dev evaluation at step %d: decoded", step), int64(evalLimit(&cfg, len(devEx))))
			dl, em, err := Evaluate(ctx, eng, vocab, o.Dev, devEx, &cfg, sub)
			sub.Finish()
			if err != nil && ctx.Err() != nil {
				return stop(step, step, true)
			}
			if err != nil {
				return fmt.Errorf("step %d: dev: %w", step, err)
			}
			if err := metrics.Encode(DevLine{Step: step, DevLoss: round(dl), DevEM: round(em), Wall: wallSince(start)}); err != nil {
				return err
			}
			best = st.BestStep == 0 || em > st.BestEM || (em == st.BestEM && dl < st.BestLoss)
			if best {
				st.BestStep, st.BestEM, st.BestLoss = step, em, dl
			}
			shown := res.TrainLoss // the mean since the last log line when steps ran since
			if nLoss > 0 {
				shown = sumLoss / float64(nLoss)
			}
			bar.SetExtra(fmt.Sprintf("loss %.4f  dev loss %.4f  dev EM %.2f%%", shown, dl, 100*em))
		}
		st.EvalPending = false
		return checkpoint(step, best)
	}
	if st.EvalPending {
		// Stopped inside this step's dev evaluation: finish it first, as
		// the uninterrupted run did.
		if err := evaluate(st.Step); err != nil {
			return nil, err
		}
	}
	for step := st.Step + 1; step <= cfg.Steps; step++ {
		if ctx.Err() != nil {
			return nil, stop(step, step-1, false)
		}
		stepStart := time.Now()
		bt := ep.batch(step)
		lr := cfg.Rate(step)
		// Step leaves the weights alone on a non-finite loss or norm.
		loss, norm, err := eng.Step(bt, cfg.LabelSmoothing, step, cfg.ClipNorm, lr)
		if err != nil {
			return nil, fmt.Errorf("step %d: %s: %w", step, device, err)
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
			return nil, fmt.Errorf("step %d: loss %v, gradient norm %v: training diverged; last good checkpoint: %s", step, loss, norm, lastGood)
		}
		res.StepTime += time.Since(stepStart)
		res.Tokens += int64(bt.Tokens)
		sumLoss += loss
		sumTok += float64(bt.Tokens)
		nLoss++
		if step%o.LogEvery == 0 || step == cfg.Steps {
			el := time.Since(tick).Seconds()
			res.TrainLoss = sumLoss / float64(nLoss)
			line := TrainLine{Gemm: engine.GemmName(be), Step: step, Loss: round(res.TrainLoss), LR: lr, GradNorm: round(norm), TokensPerS: math.Round(sumTok / el), Wall: wallSince(start)}
			if err := metrics.Encode(line); err != nil {
				return nil, err
			}
			bar.SetExtra(fmt.Sprintf("loss %.4f  %.0f tok/s", res.TrainLoss, sumTok/el))
			sumLoss, sumTok, nLoss, tick = 0, 0, 0, time.Now()
		}
		bar.Add(1)
		stepPause()
		switch {
		case (cfg.EvalEvery > 0 && step%cfg.EvalEvery == 0) || step == cfg.Steps:
			if err := evaluate(step); err != nil {
				return nil, err
			}
		case o.CheckpointEvery > 0 && time.Since(savedAt) >= o.CheckpointEvery:
			// A time-based checkpoint: weights only, no evaluation, so
			// the run's results do not depend on when it was taken.
			if err := checkpoint(step, false); err != nil {
				return nil, err
			}
		}
	}
	res.Steps = cfg.Steps
	res.BestStep = st.BestStep
	if len(devEx) > 0 {
		res.DevEM, res.DevLoss = st.BestEM, st.BestLoss
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// etaFrom is the step from which the progress line estimates the time to
// finish: the first steps build graphs and are slower than the rest.
const etaFrom = 20

// Test hooks: progressInterval >= 0 replaces the progress line interval;
// evalHook runs before each dev evaluation.
var (
	progressInterval time.Duration = -1
	evalHook         func(step int)
)

// evalLimit is the number of dev examples Evaluate scores.
func evalLimit(cfg *Config, n int) int {
	if cfg.EvalLimit > 0 && cfg.EvalLimit < n {
		return cfg.EvalLimit
	}
	return n
}

// trimMetrics drops the lines a stopped run logged after its last
// checkpoint, so a resumed run's metrics.jsonl has each step once, and
// appends extra.
func trimMetrics(path string, step int, extra []byte) error {
	b, err := data.ReadFileLimit(path, data.MetricsFile)
	if errors.Is(err, os.ErrNotExist) && extra == nil {
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var keep []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		var m struct {
			Step int `json:"step"`
		}
		if len(bytes.TrimSpace(line)) == 0 || (json.Unmarshal(line, &m) == nil && m.Step > step) {
			continue
		}
		keep = append(keep, line...)
	}
	keep = append(keep, extra...)
	return replaceSynced(path, func(w io.Writer) error {
		_, err := w.Write(keep)
		return err
	})
}

func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func unknownExample(v *models.Vocab, recs []data.Record) string {
	for i := range recs {
		for _, t := range models.Tokens(recs[i].Output) {
			if _, unk, err := v.TextIDs(t); err == nil && unk > 0 {
				return fmt.Sprintf("e.g. %q in record %q", t, recs[i].ID)
			}
		}
	}
	return ""
}

// writeStart writes vocab.json, data.json and, when the start weights are
// not the seed's (fine-tuning, a pretrained encoder), a step-0 checkpoint
// to resume from; config.json comes last, so a folder with config.json
// holds everything a resume needs. It fills in dg's vocabulary and data
// digests (dg.config is set).
func writeStart(dir string, cfg *Config, v *models.Vocab, files []DataFile, p *models.Params, opt *Adam, initialised bool, dg *digests) error {
	cb, err := cfg.Marshal()
	if err != nil {
		return err
	}
	vb, err := v.MarshalIndent()
	if err != nil {
		return err
	}
	if err := replaceSynced(filepath.Join(dir, VocabFile), bytesFill(vb)); err != nil {
		return err
	}
	dg.vocab = sha256Hex(vb)
	if files != nil {
		db, err := dataJSON(files)
		if err != nil {
			return err
		}
		if err := replaceSynced(filepath.Join(dir, DataFileName), bytesFill(db)); err != nil {
			return err
		}
		dg.data = sha256Hex(db)
	}
	if initialised {
		if err := saveCheckpoint(dir, p, opt, State{}, false, *dg); err != nil {
			return err
		}
	}
	return replaceSynced(filepath.Join(dir, ConfigFile), bytesFill(cb))
}

func bytesFill(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}
