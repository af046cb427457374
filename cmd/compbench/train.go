package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"compbench/blas"
	"compbench/data"
	"compbench/models"
	"compbench/models/pretrained"
	"compbench/progress"
	"compbench/train"
)

// trainFlags are the flags shared by train and run that override the
// config; only flags given on the command line change it.
type trainFlags struct {
	model, config                    string
	steps, batch, batchTokens, width int
	warmup, evalEvery, evalLimit     int
	layers, heads, dim, mlp          int
	encoder                          string
	encoderLayers, encoderHeads      int
	utSteps                          int
	act                              bool
	maxSrc, maxTgt                   int
	lr, smoothing, clip, dropout     float64
	seed                             uint64
	strict                           bool
	ioEncoder                        string
	preset                           string
	schedule, prefix                 string
	weightDecay                      float64
	// pretrained is the absolute folder of --init hf:DIR.
	pretrained string
}

// register adds the flags; their zero defaults mean "keep the config's
// value", so the help text states the config defaults instead.
func (f *trainFlags) register(fs *flag.FlagSet) {
	d, l := train.DefaultConfig(), defaultConfig("lstm-attention")
	fs.StringVar(&f.model, "model", "transformer", fmt.Sprintf("model `NAME`: %v", models.VariantNames()))
	fs.StringVar(&f.config, "config", "", "JSON `FILE` with a training config (unknown keys are errors); flags override it")
	fs.IntVar(&f.steps, "steps", 0, fmt.Sprintf("optimizer steps (config default %d)", d.Steps))
	fs.IntVar(&f.batch, "batch", 0, fmt.Sprintf("examples per batch (config default %d)", d.Batch))
	fs.IntVar(&f.batchTokens, "batch-tokens", 0, "target tokens per batch (0: fixed --batch rows)")
	fs.IntVar(&f.width, "bucket-width", 0, fmt.Sprintf("pad lengths to multiples of this (config default %d)", d.BucketWidth))
	fs.Float64Var(&f.lr, "lr", 0, fmt.Sprintf("peak learning rate (config default %g)", d.LR))
	fs.IntVar(&f.warmup, "warmup", 0, fmt.Sprintf("linear warmup steps before inverse square root decay, 0: constant lr (config default %d; LSTM models %d)", d.Warmup, l.Warmup))
	fs.StringVar(&f.schedule, "schedule", "", "learning-rate `KIND`: rsqrt (linear warmup, then inverse square root; Shi et al.) or polynomial (linear warmup, then linear decay to 0 at --steps; Bogin et al.'s fine-tuning) (config default rsqrt; --init: polynomial)")
	fs.StringVar(&f.prefix, "prefix", "", "`TEXT` put before every source, e.g. a T5 task prefix such as \"semantic parse: \", or task:NAME for the prefix the --init folder's config.json gives task NAME (recorded in config.json as text; predict and finetune use it too)")
	fs.Float64Var(&f.weightDecay, "weight-decay", 0, "AdamW's decoupled weight decay on every weight (0: Adam)")
	fs.Float64Var(&f.smoothing, "label-smoothing", 0, "label smoothing")
	fs.Float64Var(&f.clip, "clip", 0, fmt.Sprintf("global gradient-norm limit, 0: none (config default %g)", d.ClipNorm))
	fs.Float64Var(&f.dropout, "dropout", 0, fmt.Sprintf("dropout probability (config default %g; LSTM models %g)", d.Model.Dropout, l.Model.Dropout))
	fs.IntVar(&f.evalEvery, "eval-every", 0, fmt.Sprintf("steps between dev evaluations and checkpoints; given as 0, only at the last step (config default %d)", d.EvalEvery))
	fs.IntVar(&f.evalLimit, "eval-limit", 0, fmt.Sprintf("dev examples decoded for exact match, 0: all (config default %d)", d.EvalLimit))
	fs.IntVar(&f.layers, "layers", 0, fmt.Sprintf("encoder and decoder layers (config default %d; LSTM models %d)", d.Model.Layers, l.Model.Layers))
	fs.IntVar(&f.heads, "heads", 0, fmt.Sprintf("attention heads (config default %d)", d.Model.Heads))
	fs.IntVar(&f.dim, "dim", 0, fmt.Sprintf("embedding size; the LSTMs' hidden size (config default %d; LSTM models %d)", d.Model.Dim, l.Model.Dim))
	fs.IntVar(&f.mlp, "mlp", 0, fmt.Sprintf("feed-forward inner size (config default %d)", d.Model.MLPDim))
	fs.StringVar(&f.encoder, "encoder", "", "encoder `KIND` of the LSTM models: lstm (bidirectional LSTM) or transformer (Transformer layers of width --dim, feed-forward --mlp) (LSTM models' default lstm)")
	fs.IntVar(&f.encoderLayers, "encoder-layers", 0, "layers of the transformer encoder (default: --layers)")
	fs.IntVar(&f.encoderHeads, "encoder-heads", 0, fmt.Sprintf("attention heads of the transformer encoder (LSTM models' default %d)", l.Model.EncoderHeads))
	fs.IntVar(&f.utSteps, "ut-steps", 0, fmt.Sprintf("recurrent steps of --model universal, whose one encoder and one decoder layer are applied this many times (default %d, Keysers et al.'s setting)", models.DefaultUTSteps))
	fs.BoolVar(&f.act, "act", false, "adaptive computation time for --model universal: each position halts on its own within --ut-steps steps, ponder cost in the loss")
	fs.IntVar(&f.maxSrc, "max-src", 0, fmt.Sprintf("longest source in tokens; longer ones are truncated (config default %d)", d.Model.MaxSrcLen))
	fs.IntVar(&f.maxTgt, "max-tgt", 0, fmt.Sprintf("longest target in tokens, EOS and separators included (config default %d)", d.Model.MaxTgtLen))
	fs.StringVar(&f.ioEncoder, "io-encoder", "", "how a Transformer reads I/O-example sources (RobustFill): flat (one sequence) or double (each example apart, double attention) (config default flat)")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (initialisation, batch order, dropout)")
	fs.BoolVar(&f.strict, "strict", false, "fail on over-long examples instead of truncating them")
}

// apply sets the flags given on the command line over cfg.
func (f *trainFlags) apply(fs *flag.FlagSet, cfg *train.Config) error {
	var err error
	// --model first: it resets the variant's fields (--act among them),
	// and Visit goes in name order.
	if fl := fs.Lookup("model"); isSet(fs, "model") {
		err = f.set(fl, cfg)
	}
	fs.Visit(func(fl *flag.Flag) {
		if err == nil && fl.Name != "model" {
			err = f.set(fl, cfg)
		}
	})
	if err != nil {
		return usagef("%v", err)
	}
	if models.IsPretrained(cfg.Model.Variant) {
		for _, name := range architectureFlags {
			if isSet(fs, name) {
				return usagef("--%s does not apply to %s: the pretrained folder's config.json fixes the architecture", name, cfg.Model.Variant)
			}
		}
	}
	if err := cfg.Validate(); err != nil {
		return usagef("config: %v", err)
	}
	return nil
}

// architectureFlags size a model; a pretrained model's folder fixes them.
var architectureFlags = []string{"layers", "heads", "dim", "mlp", "dropout", "encoder", "encoder-layers", "encoder-heads", "ut-steps", "act", "io-encoder"}

// pretrainedFolder checks --init hf:DIR and returns the folder's absolute
// path and the folder.
func pretrainedFolder(init string) (string, *pretrained.Folder, error) {
	dir, ok := strings.CutPrefix(init, "hf:")
	if !ok || dir == "" {
		return "", nil, usagef("train: --init %q: want hf:DIR, a Hugging Face folder (config.json, model.safetensors, tokenizer files)", init)
	}
	f, err := pretrained.Open(dir)
	if err != nil {
		return "", nil, fmt.Errorf("--init: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", nil, err
	}
	return dir, f, nil
}

// configFlags are the train and run flags that set config.json keys; the
// flag's value is set as that key (train.Config.SetKey). --model, which
// sets several keys, is applied by set.
var configFlags = map[string]string{
	"steps": "steps", "batch": "batch", "batch-tokens": "batch_tokens", "bucket-width": "bucket_width",
	"lr": "lr", "warmup": "warmup", "label-smoothing": "label_smoothing", "clip": "clip_norm",
	"eval-every": "eval_every", "eval-limit": "eval_limit", "seed": "seed", "strict": "strict",
	"dropout": "model.dropout", "layers": "model.layers", "heads": "model.heads", "dim": "model.dim",
	"mlp": "model.mlp_dim", "encoder": "model.encoder", "encoder-layers": "model.encoder_layers",
	"encoder-heads": "model.encoder_heads", "max-src": "model.max_src_len", "max-tgt": "model.max_tgt_len",
	"io-encoder": "model.io_encoder", "ut-steps": "model.ut_steps", "act": "model.act",
	"schedule": "schedule", "weight-decay": "weight_decay", "prefix": "model.prefix",
}

// set applies one flag given on the command line to cfg; flags that are
// not config settings are left alone.
func (f *trainFlags) set(fl *flag.Flag, cfg *train.Config) error {
	switch {
	case fl.Name == "model":
		return cfg.Model.ApplyVariant(f.model)
	case fl.Name == "steps" && f.steps < 1:
		return fmt.Errorf("--steps %d: train at least 1 step", f.steps)
	case fl.Name == "eval-every" && f.evalEvery < 0:
		return fmt.Errorf("--eval-every %d: want >= 0 (0: only at the last step)", f.evalEvery)
	}
	key, ok := configFlags[fl.Name]
	if !ok {
		return nil
	}
	return cfg.SetKey(key, fl.Value.(flag.Getter).Get())
}

// resumableFlags set train.ResumableKeys, which may differ from the run's
// config.json on --resume: they are written back to config.json and
// logged in metrics.jsonl. Other config flags must repeat the run's values.
var resumableFlags = []string{"steps", "eval-every", "eval-limit"}

// applyResume sets the flags given with --resume over saved, the run's
// config.json: a flag that would change a setting outside resumableFlags
// (train.ResumeChange) is a usage error naming it and both values.
func (f *trainFlags) applyResume(fs *flag.FlagSet, saved *train.Config, path string) error {
	var err error
	fs.Visit(func(fl *flag.Flag) {
		if err != nil {
			return
		}
		switch key, isKey := configFlags[fl.Name]; {
		case fl.Name == "config":
			err = usagef("--config starts a new run; --resume reads the run's %s (change --steps, --eval-every or --eval-limit with flags)", path)
		case fl.Name == "preset" && f.preset != saved.Preset:
			was := saved.Preset
			if was == "" {
				was = "none"
			}
			err = usagef("--preset %s differs from the run's preset %s (%s): --resume keeps a run's settings", f.preset, was, path)
		case fl.Name == "model" && f.model != saved.Model.Variant:
			err = usagef("--model %s differs from the run's model %s (%s): --resume continues the same model", f.model, saved.Model.Variant, path)
		case isKey:
			ch, cerr := train.ResumeChange(*saved, key, fl.Value.(flag.Getter).Get())
			switch {
			case cerr != nil:
				err = usagef("%v", cerr)
			case ch != nil:
				err = usagef("--%s %s differs from the run's %s %s (%s): --resume may change only --%s",
					fl.Name, fl.Value, ch.Key, ch.From, path, strings.Join(resumableFlags, ", --"))
			}
		}
	})
	if err != nil {
		return err
	}
	return f.apply(fs, saved)
}

// defaultConfig is the config a new run of --model starts from
// (train.DefaultsFor).
func defaultConfig(model string) train.Config { return train.DefaultsFor(model) }

// baseConfig is the config before flags: RUN/config.json on resume, else
// the --config file over the defaults of --model.
func (f *trainFlags) baseConfig(fs *flag.FlagSet, runDir string, resume bool) (train.Config, error) {
	cfg := defaultConfig(f.model)
	if f.pretrained != "" {
		cfg = train.PretrainedConfig(f.model, f.pretrained)
	}
	var err error
	if resume {
		// A corrupt config.json of the run is the run's fault, not a
		// usage error: checked before flags change it.
		path := filepath.Join(runDir, train.ConfigFile)
		if cfg, err = train.LoadConfig(path, cfg); err == nil {
			if verr := cfg.Validate(); verr != nil {
				err = fmt.Errorf("resume: %s: %w", path, verr)
			}
		}
		if err != nil {
			return cfg, err
		}
		return cfg, f.applyResume(fs, &cfg, path)
	}
	if f.preset != "" {
		if f.pretrained != "" {
			return cfg, usagef("train: --preset sizes a model; --init takes the model from its folder (its settings are Bogin et al.'s fine-tuning)")
		}
		if cfg, err = train.PresetConfig(f.preset, f.model); err != nil {
			return cfg, usagef("%v", err)
		}
	}
	if f.config != "" {
		if cfg, err = train.LoadConfig(f.config, cfg); err != nil {
			return cfg, err
		}
	}
	given := cfg.Model
	if err := f.apply(fs, &cfg); err != nil {
		return cfg, err
	}
	if f.config != "" && isSet(fs, "model") {
		// --model sets the attention fields; the file's must agree.
		keys, err := train.ModelKeys(f.config)
		if err != nil {
			return cfg, err
		}
		if err := models.CheckVariantFields(given, keys, cfg.Model); err != nil {
			return cfg, usagef("--config %s: %v", f.config, err)
		}
	}
	return cfg, nil
}

// maxCheckpointMinutes is about the longest time.Duration holds (292
// years); beyond it the conversion to a duration overflows.
const maxCheckpointMinutes = 1.5e11

// registerTrain adds the flags of train alone: --preset.
func (f *trainFlags) registerTrain(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", "", "start from preset `NAME`'s size, schedule and batch ("+strings.Join(train.PresetNames(), ", ")+"; see above); --config and flags override it")
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("train", "train --model M --train train.jsonl --dev dev.jsonl --out RUN [flags]", `
Train a sequence-to-sequence model (Shi et al. settings: Adam 0.9/0.98/1e-9,
lr * min(1, step/warmup) * sqrt(warmup)/sqrt(max(step, warmup))). Without --config,
the LSTM models (lstm-attention, lstm-copy) start from Keysers et al.'s setting
instead: hidden size 512, 2 layers, dropout 0.4, constant lr (warmup 0); flags
override it and config.json records what was used. RUN gets
config.json, vocab.json, model.safetensors (latest), best.safetensors (best dev
exact match), optim.safetensors, state.json, data.json (size and SHA-256 of
--train and --dev) and metrics.jsonl. --resume continues a stopped run, killed
or not, to the same weights as an uninterrupted one (docs/checkpoints.md), on
the same data unless --allow-data-change; with it, only --steps, --eval-every
and --eval-limit may differ from the run's config.json. Ctrl-C, SIGTERM and
SIGHUP checkpoint the last finished step before exiting.

The defaults are the papers' settings, sized for a GPU (a step of the default
Transformer takes seconds on a CPU). --preset NAME starts from other settings
(config.json records the name):`+train.PresetHelp(), stderr)
	var c trainCmd
	c.tf.register(fs)
	c.tf.registerTrain(fs)
	fs.Float64Var(&c.ckptMinutes, "checkpoint-minutes", 0, "also checkpoint every `M` minutes of training (fractions allowed), besides each --eval-every; 0: off")
	fs.StringVar(&c.trainPath, "train", "", "training records `FILE` (JSONL, .tsv or SCAN .txt; required)")
	fs.StringVar(&c.devPath, "dev", "", "dev records `FILE` (JSONL, .tsv or SCAN .txt) for evaluation and the best checkpoint")
	fs.StringVar(&c.out, "out", "", "run `DIR` (required)")
	fs.BoolVar(&c.resume, "resume", false, "continue the run in --out from its last checkpoint")
	fs.BoolVar(&c.force, "force", false, "replace an existing run in --out")
	fs.BoolVar(&c.allowData, "allow-data-change", false, "let --resume continue on --train or --dev files that differ from the run's data.json")
	devName := deviceFlag(fs)
	cacheMB := graphCacheFlag(fs)
	fs.StringVar(&c.initFrom, "init", "", "start from the pretrained T5 or BART in Hugging Face folder `hf:DIR` (config.json, model.safetensors, tokenizer files; docs/pretrained.md): --model comes from the folder, and the defaults become Bogin et al.'s fine-tuning (AdamW 3e-5, batch 28, polynomial decay, clip 1)")
	fs.StringVar(&c.initEnc, "init-encoder", "", "Transformer run `DIR` whose encoder (best checkpoint) starts an LSTM model with --encoder transformer; sizes must match, source embeddings are matched by token")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := c.check(fs); err != nil {
		return err
	}
	if err := checkTrainOutputs(c.out, c.resume, c.trainPath, c.devPath, c.tf.config, c.initEnc); err != nil {
		return err
	}
	dv, err := parseDevice(*devName)
	if err != nil {
		return err
	}
	if err := setGraphCache(*cacheMB); err != nil {
		return err
	}
	blas.Use()
	// Held before the run's files are read: a second writer is refused
	// here, before it reads or writes anything.
	lock, err := train.LockRun(c.out)
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	defer lock.Unlock()
	cfg, err := c.tf.baseConfig(fs, c.out, c.resume)
	if err != nil {
		return err
	}
	opts, err := c.options(cfg, stderr)
	if err != nil {
		return err
	}
	opts.Lock = lock
	be, release, err := dv.open()
	if err != nil {
		return err
	}
	defer release()
	opts.Backend = be
	res, err := train.Train(ctx, cfg, opts)
	if err != nil {
		return err
	}
	res.Print(stdout, c.out)
	return nil
}

// trainCmd holds train's flags beside the config flags.
type trainCmd struct {
	tf                                         trainFlags
	trainPath, devPath, out, initFrom, initEnc string
	resume, force, allowData                   bool
	ckptMinutes                                float64
}

// check refuses contradictory flags and reads the --init folder: its
// model type becomes --model, its task prefixes --prefix task:NAME.
func (c *trainCmd) check(fs *flag.FlagSet) error {
	switch {
	case c.trainPath == "" || c.out == "":
		return usagef("train: --train and --out are required")
	case c.resume && c.force:
		return usagef("train: --resume and --force exclude each other")
	case c.ckptMinutes < 0 || c.ckptMinutes > maxCheckpointMinutes:
		return usagef("train: --checkpoint-minutes %g: want 0 (off) to %g", c.ckptMinutes, maxCheckpointMinutes)
	case c.resume && (c.initEnc != "" || c.initFrom != ""):
		return usagef("train: --init and --init-encoder start a new run; --resume continues from the run's own weights")
	}
	task, byTask := strings.CutPrefix(c.tf.prefix, "task:")
	if byTask && c.initFrom == "" {
		return usagef("train: --prefix task:%s reads the task's prefix from a pretrained folder: give --init hf:DIR", task)
	}
	if c.initFrom == "" {
		return nil
	}
	dir, f, err := pretrainedFolder(c.initFrom)
	if err != nil {
		return err
	}
	typ := f.Config.ModelType
	if byTask {
		if c.tf.prefix, err = f.TaskPrefix(task); err != nil {
			return fmt.Errorf("--prefix: %w", err)
		}
	}
	if isSet(fs, "model") && c.tf.model != typ {
		return usagef("train: --model %s, but %s holds a %s model", c.tf.model, dir, typ)
	}
	if abs, _ := filepath.Abs(c.out); abs == dir {
		return usagef("train: --out %s is the --init folder; the run would overwrite its model.safetensors", c.out)
	}
	c.tf.model, c.tf.pretrained = typ, dir
	return nil
}

// options reads the data, checks that training fits in memory, warns of
// what the length limits cut, and fills the options of train.Train but
// for the lock and the backend.
func (c *trainCmd) options(cfg train.Config, stderr io.Writer) (train.Options, error) {
	recs, dev, err := train.ReadData(c.trainPath, c.devPath)
	if err != nil {
		return train.Options{}, err
	}
	if parts := train.TrainMemory(cfg, recs, dev); parts != nil {
		if err := checkMemory("train", memParts(parts...)...); err != nil {
			return train.Options{}, err
		}
	}
	if !cfg.Strict {
		for _, f := range []struct {
			path string
			recs []data.Record
		}{{c.trainPath, recs}, {c.devPath, dev}} {
			if note := models.TruncationNote(cfg.Model, f.recs); note != "" {
				fmt.Fprintf(stderr, "warning: %s: %s\n", f.path, note)
			}
		}
	}
	opts := train.Options{Dir: c.out, Train: recs, Dev: dev, Resume: c.resume, Force: c.force, Progress: progress.To(stderr),
		AllowDataChange: c.allowData, TruncationNoted: true, CheckpointEvery: time.Duration(c.ckptMinutes * float64(time.Minute))}
	if opts.Data, err = train.Fingerprints(c.trainPath, c.devPath); err != nil {
		return opts, err
	}
	var encWeights string
	if c.initEnc != "" {
		if !models.IsLSTM(cfg.Model.Variant) || cfg.Model.Encoder != models.EncoderTransformer {
			return opts, usagef("train: --init-encoder needs an LSTM model with --encoder transformer")
		}
		if opts.Init, encWeights, err = train.InitEncoder(c.initEnc, stderr); err != nil {
			return opts, fmt.Errorf("--init-encoder: %w", err)
		}
	}
	// The data files are hashed once, for data.json and the provenance.
	if opts.Provenance, err = provenanceOf([2]string{"init-encoder", encWeights}); err != nil {
		return opts, err
	}
	opts.Provenance.Inputs = append(append([]train.DataFile(nil), opts.Data...), opts.Provenance.Inputs...)
	return opts, nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}
