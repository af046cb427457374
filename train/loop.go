package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Train runs (or resumes) training and returns its summary.
func Train(ctx context.Context, cfg Config, o Options) (*Result, error) {
	t, err := newTrainer(ctx, cfg, o)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if t.o.Resume {
		err = t.resume()
	} else {
		err = t.open()
	}
	if err != nil {
		return nil, err
	}
	if t.st.EvalPending {
		// Stopped inside this step's dev evaluation: finish it first, as
		// the uninterrupted run did.
		if err := t.evaluate(t.st.Step); err != nil {
			return nil, err
		}
	}
	for step := t.st.Step + 1; step <= t.cfg.Steps; step++ {
		if ctx.Err() != nil {
			return nil, t.stop(step, step-1, false)
		}
		if err := t.step(step); err != nil {
			return nil, err
		}
		switch {
		case (t.cfg.EvalEvery > 0 && step%t.cfg.EvalEvery == 0) || step == t.cfg.Steps:
			err = t.evaluate(step)
		case t.o.CheckpointEvery > 0 && time.Since(t.savedAt) >= t.o.CheckpointEvery:
			// A time-based checkpoint: weights only, no evaluation, so
			// the run's results do not depend on when it was taken.
			err = t.checkpoint(step, false)
		}
		if err != nil {
			return nil, err
		}
	}
	return t.result(), nil
}

// trainer is one invocation of Train: the run's settings, model, data and
// files, and the bookkeeping between steps.
type trainer struct {
	ctx   context.Context
	start time.Time
	cfg   Config
	o     Options
	lock  *RunLock // ours to release; nil when the caller holds it

	st    State
	dg    digests // what each checkpoint records besides its state
	vocab *models.Vocab
	m     models.Model
	p     *models.Params
	opt   *Adam
	be    engine.Backend
	eng   models.Runner

	trainEx, devEx []models.Example
	stats          models.EncodeStats
	ep             *epochs

	mf      *os.File
	metrics *json.Encoder
	bar     *progress.Bar
	res     *Result

	// The losses since the last metrics line; a checkpoint saves them, so
	// a resumed run's next line has the uninterrupted run's mean.
	sumLoss float64
	nLoss   int
	sumTok  float64
	tick    time.Time

	lastGood string    // the last checkpoint, for error messages
	saved    int       // its step
	savedAt  time.Time // and when it was written
}

// newTrainer checks o and holds the run folder's lock; close releases it.
func newTrainer(ctx context.Context, cfg Config, o Options) (*trainer, error) {
	t := &trainer{ctx: ctx, start: time.Now(), cfg: cfg, o: o, vocab: o.Vocab}
	t.o.Progress = progress.Or(o.Progress)
	if t.o.LogEvery <= 0 {
		t.o.LogEvery = 100
	}
	if len(o.Train) == 0 {
		return nil, errors.New("training data is empty")
	}
	if o.Lock == nil {
		l, err := LockRun(o.Dir)
		if err != nil {
			return nil, err
		}
		t.lock = l
	} else if !sameDir(o.Lock.Dir(), o.Dir) {
		return nil, fmt.Errorf("train: the lock held is %s's, not %s's", o.Lock.Dir(), o.Dir)
	}
	return t, nil
}

// close releases what open or resume acquired, last acquired first.
func (t *trainer) close() {
	if t.bar != nil {
		t.bar.Finish()
	}
	if t.mf != nil {
		t.mf.Close()
	}
	if t.eng != nil {
		t.eng.Close()
	}
	if t.lock != nil {
		t.lock.Unlock()
	}
}

// open starts a new run in the folder. Everything is read and checked
// before the first write to the run folder, so bad input never costs the
// user what the folder held.
func (t *trainer) open() error {
	if err := checkNewDir(t.o.Dir, t.o.Force); err != nil {
		return err
	}
	if p := t.cfg.Model.Pretrained; p != "" && !filepath.IsAbs(p) {
		// config.json records the folder from anywhere a resume runs.
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		t.cfg.Model.Pretrained = abs
	}
	if t.vocab == nil {
		var err error
		if t.vocab, err = NewVocab(t.cfg.Model, t.o.Train); err != nil {
			return err
		}
	}
	t.cfg.Model.SrcVocab, t.cfg.Model.TgtVocab = len(t.vocab.Source), len(t.vocab.Target)
	if err := t.build(); err != nil {
		return err
	}
	initialised := false // the start weights are not the seed's
	if t.o.InitWeights != "" {
		if err := LoadWeights(t.o.InitWeights, t.p); err != nil {
			return err
		}
		initialised = true
	}
	if t.o.Init != nil {
		if err := t.o.Init(t.m, t.vocab); err != nil {
			return err
		}
		initialised = true
	}
	if err := t.bind(); err != nil {
		return err
	}
	// The first write to the run folder.
	if err := prepareDir(t.o.Dir, t.o.Force); err != nil {
		return err
	}
	if err := writeStart(t.o.Dir, &t.cfg, t.vocab, t.o.Data, t.p, t.opt, initialised, &t.dg); err != nil {
		return err
	}
	return t.begin()
}

// resume continues the run in the folder from its last checkpoint; like
// open, it checks everything before it writes.
func (t *trainer) resume() error {
	rp, err := readResume(t.o.Dir, &t.cfg, &t.o)
	if err != nil {
		if errors.Is(err, ErrInconsistent) {
			return err // the message leads with what went wrong
		}
		return fmt.Errorf("resume: %w", err)
	}
	t.vocab, t.st = rp.vocab, rp.state
	for _, c := range rp.changes {
		if c.Key == "steps" && t.cfg.Schedule == SchedulePolynomial {
			t.o.Progress.Notef("warning: the polynomial schedule decays to 0 at the last step: steps 1-%d decayed toward step %s, the rest decay toward step %d; an uninterrupted run of %d steps would differ",
				t.st.Step, c.From, t.cfg.Steps, t.cfg.Steps)
		}
	}
	if err := t.build(); err != nil {
		return err
	}
	t.dg.vocab, t.dg.data = rp.vocabDigest, rp.dataDigest
	// Before the first checkpoint (rp.model "") the run restarts from the
	// seed's initialisation, as it first did.
	if rp.model != "" {
		if err := LoadWeights(rp.model, t.p); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if err := loadOptim(rp.optim, t.p, t.opt); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	t.opt.T = t.st.AdamT
	if err := t.bind(); err != nil {
		return err
	}
	// The first write to the run folder.
	if err := resumeDir(t.o.Dir, rp); err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	return t.begin()
}

// build checks the config and makes the model, the encoded data and the
// optimizer, for open and resume alike.
func (t *trainer) build() error {
	cfg := &t.cfg
	if err := cfg.Validate(); err != nil {
		return err
	}
	var err error
	if t.dg.config, err = configDigest(*cfg); err != nil {
		return err
	}
	// The model comes before the data is encoded: a pretrained model's
	// vocabulary read back from a run gets its tokenizer here.
	if t.m, err = NewModel(cfg.Model, cfg.Seed, t.vocab); err != nil {
		return err
	}
	if cfg.Warmup > 0 && cfg.Warmup >= cfg.Steps {
		t.o.Progress.Notef("warning: warmup %d >= steps %d: the learning rate never reaches its peak %g (it ends at %.2g); set --warmup below --steps, or use --preset cpu-small for a short run",
			cfg.Warmup, cfg.Steps, cfg.LR, cfg.Rate(cfg.Steps))
	}
	if err := t.encode(); err != nil {
		return err
	}
	t.p = t.m.Params()
	t.opt = NewAdam(t.p, cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay)
	return nil
}

// encode turns the training and dev records into examples, warning of
// what the model's limits and vocabulary lose.
func (t *trainer) encode() error {
	cfg, o, vocab := &t.cfg, &t.o, t.vocab
	enc := cfg.Model.EncodeOptions(cfg.Strict)
	var err error
	if t.trainEx, t.stats, err = models.Encode(vocab, o.Train, enc); err != nil {
		return fmt.Errorf("training data: %w", err)
	}
	stats := t.stats
	if stats.Truncated > 0 && !o.TruncationNoted {
		o.Progress.Notef("warning: %d training examples longer than the model's limits (%d source / %d target tokens) were truncated",
			stats.Truncated, cfg.Model.MaxSrcLen, cfg.Model.MaxTgtLen)
	}
	if o.Vocab == nil && vocab.Pretrained != "" && stats.UnknownTgt > 0 {
		o.Progress.Notef("warning: %d target pieces are unknown to the tokenizer of %s (%s): those outputs cannot be produced exactly",
			stats.UnknownTgt, vocab.Pretrained, unknownExample(vocab, o.Train))
	}
	if o.Vocab != nil && stats.UnknownTgt > 0 {
		return fmt.Errorf("vocabulary mismatch: the data has %d target tokens unknown to the model's vocabulary (%s)", stats.UnknownTgt, unknownExample(vocab, o.Train))
	}
	devEnc := enc
	devEnc.Strict = false
	if t.devEx, _, err = models.Encode(vocab, o.Dev, devEnc); err != nil {
		return fmt.Errorf("dev data: %w", err)
	}
	return nil
}

// bind puts the model and optimizer on the backend, once the weights are
// final.
func (t *trainer) bind() error {
	t.be = defaultBackend(t.o.Backend)
	var err error
	t.eng, err = bindTrainer(t.m, t.be, t.opt)
	return err
}

// begin records the invocation's provenance, opens metrics.jsonl and
// shows the progress bar: the run folder is ready to train in.
func (t *trainer) begin() error {
	st, o := &t.st, &t.o
	if o.Provenance != nil {
		if err := appendProvenance(o.Dir, st.Step, t.be, o.Provenance); err != nil {
			return err
		}
	}
	mf, err := os.OpenFile(filepath.Join(o.Dir, MetricsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	t.mf, t.metrics = mf, json.NewEncoder(mf)
	t.res = &Result{DevEM: -1, BestStep: st.BestStep, Truncated: t.stats.Truncated}
	if st.BestStep > 0 {
		t.res.DevEM, t.res.DevLoss = st.BestEM, st.BestLoss
	}
	device := t.be.Name()
	o.Progress.Notef("train: engine executor on %s", engine.Describe(t.be))
	label := "train on " + device
	if st.Step > 0 {
		label = fmt.Sprintf("train (resumed at step %d) on %s", st.Step, device)
	}
	t.bar = o.Progress.Bar(label, int64(t.cfg.Steps-st.Step))
	t.bar.SetETAFrom(etaFrom)
	if progressInterval >= 0 {
		t.bar.SetInterval(progressInterval)
	}
	t.ep = &epochs{ex: t.trainEx, cfg: &t.cfg}
	t.sumLoss, t.nLoss = st.LossSum, st.LossSteps
	t.tick = time.Now()
	t.lastGood = "none (no checkpoint written yet)"
	t.saved, t.savedAt = st.Step, time.Now()
	if st.Step > 0 {
		t.lastGood = fmt.Sprintf("%s (step %d)", filepath.Join(o.Dir, ModelFile), st.Step)
	}
	return nil
}

// step trains on step's batch and logs a metrics line every LogEvery
// steps and at the last.
func (t *trainer) step(step int) error {
	cfg, res := &t.cfg, t.res
	stepStart := time.Now()
	bt := t.ep.batch(step)
	lr := cfg.Rate(step)
	// Step leaves the weights alone on a non-finite loss or norm.
	loss, norm, err := t.eng.Step(bt, cfg.LabelSmoothing, step, cfg.ClipNorm, lr)
	if err != nil {
		return fmt.Errorf("step %d: %s: %w", step, t.be.Name(), err)
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return fmt.Errorf("step %d: loss %v, gradient norm %v: training diverged; last good checkpoint: %s", step, loss, norm, t.lastGood)
	}
	res.StepTime += time.Since(stepStart)
	res.Tokens += int64(bt.Tokens)
	t.sumLoss += loss
	t.sumTok += float64(bt.Tokens)
	t.nLoss++
	if step%t.o.LogEvery == 0 || step == cfg.Steps {
		el := time.Since(t.tick).Seconds()
		res.TrainLoss = t.sumLoss / float64(t.nLoss)
		line := TrainLine{Gemm: engine.GemmName(t.be), Step: step, Loss: round(res.TrainLoss), LR: lr, GradNorm: round(norm), TokensPerS: math.Round(t.sumTok / el), Wall: wallSince(t.start)}
		if err := t.metrics.Encode(line); err != nil {
			return err
		}
		t.bar.SetExtra(fmt.Sprintf("loss %.4f  %.0f tok/s", res.TrainLoss, t.sumTok/el))
		t.sumLoss, t.sumTok, t.nLoss, t.tick = 0, 0, 0, time.Now()
	}
	t.bar.Add(1)
	stepPause()
	return nil
}

// evaluate scores the dev set after step, keeps the best weights and
// checkpoints.
func (t *trainer) evaluate(step int) error {
	st := &t.st
	best := false // without a dev set no step is evaluated, none is best
	if len(t.devEx) > 0 {
		if evalHook != nil {
			evalHook(step)
		}
		sub := t.bar.Sub(fmt.Sprintf("dev evaluation at step %d: decoded", step), int64(evalLimit(&t.cfg, len(t.devEx))))
		dl, em, err := Evaluate(t.ctx, t.eng, t.vocab, t.o.Dev, t.devEx, &t.cfg, sub)
		sub.Finish()
		if err != nil && t.ctx.Err() != nil {
			return t.stop(step, step, true)
		}
		if err != nil {
			return fmt.Errorf("step %d: dev: %w", step, err)
		}
		if err := t.metrics.Encode(DevLine{Step: step, DevLoss: round(dl), DevEM: round(em), Wall: wallSince(t.start)}); err != nil {
			return err
		}
		best = st.BestStep == 0 || em > st.BestEM || (em == st.BestEM && dl < st.BestLoss)
		if best {
			st.BestStep, st.BestEM, st.BestLoss = step, em, dl
		}
		shown := t.res.TrainLoss // the mean since the last log line when steps ran since
		if t.nLoss > 0 {
			shown = t.sumLoss / float64(t.nLoss)
		}
		t.bar.SetExtra(fmt.Sprintf("loss %.4f  dev loss %.4f  dev EM %.2f%%", shown, dl, 100*em))
	}
	st.EvalPending = false
	return t.checkpoint(step, best)
}

// checkpoint saves the weights, optimizer and state after step (and the
// best weights when best).
func (t *trainer) checkpoint(step int, best bool) error {
	if err := syncHost(t.eng, t.opt); err != nil {
		return fmt.Errorf("step %d: checkpoint: %s: %w", step, t.be.Name(), err)
	}
	t.st.Step, t.st.AdamT = step, t.opt.T
	t.st.LossSum, t.st.LossSteps = t.sumLoss, t.nLoss
	if err := saveCheckpoint(t.o.Dir, t.p, t.opt, t.st, best, t.dg); err != nil {
		return err
	}
	t.lastGood = fmt.Sprintf("%s (step %d)", filepath.Join(t.o.Dir, ModelFile), step)
	t.saved, t.savedAt = step, time.Now()
	return nil
}

// stop ends a run cancelled (Ctrl-C, SIGTERM, SIGHUP) after done steps:
// their weights are checkpointed first, so at most the step in progress is
// lost. A stop inside the dev evaluation of step done checkpoints with the
// evaluation pending; --resume runs it first.
func (t *trainer) stop(at, done int, evalPending bool) error {
	cause, where := t.ctx.Err(), ""
	if evalPending {
		where = " (dev evaluation)"
	}
	if done > t.saved || evalPending {
		t.st.EvalPending = evalPending
		if err := t.checkpoint(done, false); err != nil {
			return fmt.Errorf("interrupted at step %d%s; the checkpoint of step %d failed (%v); last checkpoint: %s: %w", at, where, done, err, t.lastGood, cause)
		}
	}
	if done == 0 {
		return fmt.Errorf("interrupted at step %d%s, before any checkpoint; --resume starts the run again: %w", at, where, cause)
	}
	return fmt.Errorf("interrupted at step %d%s; checkpoint %s; --resume continues from it: %w", at, where, t.lastGood, cause)
}

// result is the summary of a run that trained to its last step.
func (t *trainer) result() *Result {
	res := t.res
	res.Steps = t.cfg.Steps
	res.BestStep = t.st.BestStep
	if len(t.devEx) > 0 {
		res.DevEM, res.DevLoss = t.st.BestEM, t.st.BestLoss
	}
	res.Elapsed = time.Since(t.start)
	return res
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
