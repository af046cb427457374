package train

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"compbench/data"
	"compbench/models"
	"compbench/safetensors"
)

// A run folder holds:
//
//	config.json        the Config (model + optimisation), written at the start
//	vocab.json         the vocabularies
//	model.safetensors  the latest weights
//	optim.safetensors  Adam's moments for those weights
//	state.json         step, best dev result, for --resume
//	best.safetensors   the weights with the best dev exact match
//	metrics.jsonl      one line per log interval and per evaluation
//
// Decision: the optimizer moments go in their own safetensors file rather
// than state.json, so they stay exact float32 and compact.
const (
	ConfigFile  = "config.json"
	VocabFile   = "vocab.json"
	ModelFile   = "model.safetensors"
	OptimFile   = "optim.safetensors"
	StateFile   = "state.json"
	BestFile    = "best.safetensors"
	MetricsFile = "metrics.jsonl"
)

// State is what resumption needs besides weights and moments. Batch order
// and dropout derive from (seed, step), so the step is the RNG position.
type State struct {
	// Step is the number of optimizer steps done.
	Step int `json:"step"`
	// AdamT is the optimizer's update count.
	AdamT int `json:"adam_t"`
	// BestStep, BestEM, BestLoss describe best.safetensors (BestStep 0:
	// none yet).
	BestStep int     `json:"best_step"`
	BestEM   float64 `json:"best_em"`
	BestLoss float64 `json:"best_loss"`
	// EvalPending marks a checkpoint taken when a stop interrupted step
	// Step's dev evaluation: --resume runs that evaluation first.
	EvalPending bool `json:"eval_pending,omitempty"`
	// LossSum and LossSteps are the training losses summed since the last
	// metrics line and their count, so that a resumed run's next line
	// has the mean an uninterrupted run would log (0: none pending).
	LossSum   float64 `json:"loss_sum,omitempty"`
	LossSteps int     `json:"loss_steps,omitempty"`
}

func tensorsOf(p *models.Params, prefix string, vals [][]float32) ([]safetensors.Tensor, error) {
	out := make([]safetensors.Tensor, len(p.Names))
	for i, n := range p.Names {
		t, err := safetensors.FromFloat32s(prefix+n, p.Values[i].Shape(), vals[i])
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func paramData(p *models.Params) [][]float32 {
	out := make([][]float32, len(p.Names))
	for i := range out {
		out[i] = p.Data(i)
	}
	return out
}

func safetensorsFill(ts []safetensors.Tensor, meta map[string]string) func(io.Writer) error {
	return func(w io.Writer) error { return safetensors.Write(w, ts, meta) }
}

// saveCheckpoint commits weights, moments and state as one checkpoint
// (see commitCheckpoint), plus best.safetensors when best is set. Each
// safetensors file records its step in __metadata__, which --resume checks
// against state.json, and the digests of the files the checkpoint goes
// with (dg and state.json's), which --resume checks against those files.
func saveCheckpoint(dir string, p *models.Params, opt *Adam, st State, best bool, dg digests) error {
	sb, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	sb = append(sb, '\n')
	meta := dg.metadata(st.Step, sb)
	files := map[string]func(io.Writer) error{StateFile: bytesFill(sb)}
	w, err := tensorsOf(p, "", paramData(p))
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	files[ModelFile] = safetensorsFill(w, meta)
	if best {
		files[BestFile] = safetensorsFill(w, meta)
	}
	m, err := tensorsOf(p, "m/", opt.M)
	if err == nil {
		var v []safetensors.Tensor
		if v, err = tensorsOf(p, "v/", opt.V); err == nil {
			files[OptimFile] = safetensorsFill(append(m, v...), meta)
		}
	}
	if err == nil {
		err = commitCheckpoint(dir, files)
	}
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", dir, err)
	}
	return nil
}

// LoadWeights reads a safetensors file into p; names and shapes must match.
// prefix selects tensors "prefix+name" (optimizer moments).
func LoadWeights(path string, p *models.Params) error {
	vals, err := readTensors(path, p, "")
	if err != nil {
		return err
	}
	copyInto(paramData(p), vals)
	return nil
}

func copyInto(dst, src [][]float32) {
	for i := range dst {
		copy(dst[i], src[i])
	}
}

// readTensors reads the tensors prefix+name of every parameter, checking
// shapes and that the file holds nothing else with that prefix.
func readTensors(path string, p *models.Params, prefix string) ([][]float32, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		return nil, fmt.Errorf("corrupt checkpoint: %w", err)
	}
	out := make([][]float32, len(p.Names))
	for i, n := range p.Names {
		t, ok := f.Get(prefix + n)
		if !ok {
			return nil, fmt.Errorf("checkpoint %s lacks tensor %q: it belongs to another model or vocabulary", path, prefix+n)
		}
		want := p.Values[i].Shape()
		if len(t.Shape) != len(want) {
			return nil, fmt.Errorf("checkpoint %s: tensor %q has shape %v, the model %v (another model or vocabulary)", path, n, t.Shape, want)
		}
		for k := range want {
			if t.Shape[k] != want[k] {
				return nil, fmt.Errorf("checkpoint %s: tensor %q has shape %v, the model %v (another model or vocabulary)", path, n, t.Shape, want)
			}
		}
		v, err := t.Float32s()
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: tensor %q: %w", path, n, err)
		}
		// Caught here, a bad weight names its file and tensor instead of
		// surfacing later as a NaN score or loss.
		if bad := safetensors.NonFinite(v); bad != "" {
			return nil, fmt.Errorf("%s: tensor %s holds %s", path, prefix+n, bad)
		}
		out[i] = v
	}
	return out, nil
}

// loadOptim reads Adam's moments.
func loadOptim(path string, p *models.Params, opt *Adam) error {
	m, err := readTensors(path, p, "m/")
	if err != nil {
		return err
	}
	v, err := readTensors(path, p, "v/")
	if err != nil {
		return err
	}
	copyInto(opt.M, m)
	copyInto(opt.V, v)
	return nil
}

func readJSONStrict(path string, v any) error {
	_, err := readJSONBytes(path, v)
	return err
}

// readJSONBytes is readJSONStrict that also returns the file's bytes.
func readJSONBytes(path string, v any) ([]byte, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: data after the JSON object", path)
	}
	return b, nil
}

// Run is a trained model loaded from a run folder.
type Run struct {
	// Dir is the run folder.
	Dir string
	// Config is RUN/config.json.
	Config Config
	// Vocab is RUN/vocab.json.
	Vocab *models.Vocab
	// Def is the model with the loaded weights.
	Def models.Model
	// Model runs Def on a device; UseBackend sets it.
	Model models.Seq2Seq

	weights string // the file they came from
}

// WeightsPath is the safetensors file the run's weights were read from.
func (r *Run) WeightsPath() string { return r.weights }

// OpenRun loads a run's config, vocabulary and weights: best.safetensors
// when it exists and best is set, model.safetensors otherwise.
func OpenRun(dir string, best bool) (*Run, error) {
	r := &Run{Dir: dir}
	if err := readJSONStrict(filepath.Join(dir, ConfigFile), &r.Config); err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if err := r.Config.Validate(); err != nil {
		return nil, fmt.Errorf("run %s: %s: %w", dir, ConfigFile, err)
	}
	v, err := models.ReadVocab(filepath.Join(dir, VocabFile))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	r.Vocab = v
	if len(v.Source) != r.Config.Model.SrcVocab || len(v.Target) != r.Config.Model.TgtVocab {
		return nil, fmt.Errorf("run %s: vocab.json has %d/%d tokens, config.json says %d/%d", dir,
			len(v.Source), len(v.Target), r.Config.Model.SrcVocab, r.Config.Model.TgtVocab)
	}
	m, err := NewModel(r.Config.Model, r.Config.Seed, v)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	// checkpointPath: a checkpoint committed but not yet installed (its
	// writer was killed) is the newest; its files are read where they are.
	path := checkpointPath(dir, ModelFile)
	if bp := checkpointPath(dir, BestFile); best {
		if _, err := os.Stat(bp); err == nil {
			path = bp
		}
	}
	if err := LoadWeights(path, m.Params()); err != nil {
		return nil, err
	}
	r.Def, r.weights = m, path
	return r, nil
}
