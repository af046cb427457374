package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"compbench/data"
	"compbench/models"
	"compbench/provenance"
	"compbench/safetensors"
)

// ErrInconsistent marks a checkpoint whose files belong to different steps.
var ErrInconsistent = errors.New("inconsistent checkpoint")

// Validate range-checks a state read from disk, so a corrupt state.json is
// an error before it reaches batch indexing or metrics trimming.
func (s *State) Validate() error {
	switch {
	case s.Step < 0:
		return fmt.Errorf("step %d < 0", s.Step)
	case s.AdamT < 0 || s.AdamT > s.Step:
		return fmt.Errorf("adam_t %d outside [0, step %d]", s.AdamT, s.Step)
	case s.BestStep < 0 || s.BestStep > s.Step:
		return fmt.Errorf("best_step %d outside [0, step %d]", s.BestStep, s.Step)
	case !(s.BestEM >= 0 && s.BestEM <= 1):
		return fmt.Errorf("best_em %v outside [0, 1]", s.BestEM)
	case !(s.BestLoss >= 0) || math.IsInf(s.BestLoss, 1):
		return fmt.Errorf("best_loss %v is not a finite loss", s.BestLoss)
	case s.LossSteps < 0 || s.LossSteps > s.Step:
		return fmt.Errorf("loss_steps %d outside [0, step %d]", s.LossSteps, s.Step)
	case !(s.LossSum >= 0) || math.IsInf(s.LossSum, 1) || (s.LossSteps == 0 && s.LossSum != 0):
		return fmt.Errorf("loss_sum %v is not a finite sum of %d losses", s.LossSum, s.LossSteps)
	}
	return nil
}

// DataFile identifies a data file by size and SHA-256, so resuming on
// other data than the run was trained on is caught. Role is the flag the
// file came from ("train" or "dev"); Path, as given, is for messages only:
// a moved file with the same bytes is the same data.
type DataFile = provenance.File

// DataFileName holds the fingerprints of a run's data files.
const DataFileName = "data.json"

type dataFiles struct {
	Files []DataFile `json:"files"`
}

// Fingerprint reads path and returns its size and SHA-256.
func Fingerprint(role, path string) (DataFile, error) { return provenance.Hash(role, path) }

// dataChange compares the saved fingerprints with the current ones and
// describes the first difference ("" when the data are the same).
func dataChange(saved, now []DataFile) string {
	find := func(fs []DataFile, role string) *DataFile {
		for i := range fs {
			if fs[i].Role == role {
				return &fs[i]
			}
		}
		return nil
	}
	for _, role := range []string{"train", "dev"} {
		a, b := find(saved, role), find(now, role)
		switch {
		case a == nil && b == nil:
		case a == nil:
			return fmt.Sprintf("--%s %s is given but the run had none", role, b.Path)
		case b == nil:
			return fmt.Sprintf("--%s is missing but the run was trained with %s", role, a.Path)
		case a.Size != b.Size || a.SHA256 != b.SHA256:
			return fmt.Sprintf("--%s %s (%d bytes, sha256 %.12s) differs from the run's %s (%d bytes, sha256 %.12s)",
				role, b.Path, b.Size, b.SHA256, a.Path, a.Size, a.SHA256)
		}
	}
	return ""
}

// resumePoint is what a run folder says about where to resume, read and
// checked without writing anything.
type resumePoint struct {
	state State
	vocab *models.Vocab
	// model and optim are the checkpoint files to load ("" before the
	// first checkpoint: start from the seed's initialisation).
	model, optim string
	// data are the fingerprints to record when the data changed (nil:
	// keep data.json as it is).
	data []DataFile
	// changes are the settings this resume changes (ResumableKeys only),
	// written back to config.json and logged in metrics.jsonl.
	changes []Change
	// config is config.json's new bytes when changes is not empty.
	config []byte
	// vocabDigest and dataDigest are the SHA-256 of vocab.json and of
	// data.json as the resumed run leaves them ("": no data.json).
	vocabDigest, dataDigest string
}

// ResumableKeys are the config keys a resume may change (the flags
// --steps, --eval-every and --eval-limit): how long to train and how often
// and how much to evaluate. The rest shape the trajectory of the weights
// (a resumed run must end where an uninterrupted one with the same
// settings would), or the model itself.
var ResumableKeys = []string{"steps", "eval_every", "eval_limit"}

// Change is one config setting that differs between two configs: Key as
// in config.json ("lr", "model.dim"), From and To as JSON.
type Change struct {
	Key, From, To string
}

// ConfigChanges lists the keys whose values differ from a to b, sorted.
func ConfigChanges(a, b Config) ([]Change, error) {
	fa, err := flatConfig(a)
	if err != nil {
		return nil, err
	}
	fb, err := flatConfig(b)
	if err != nil {
		return nil, err
	}
	keys := make(map[string]bool)
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []Change
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if fa[k] != fb[k] {
			out = append(out, Change{Key: k, From: orNone(fa[k]), To: orNone(fb[k])})
		}
	}
	return out, nil
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

// flatConfig maps each leaf of c's JSON to its JSON value, nested keys
// dotted ("model.dim").
func flatConfig(c Config) (map[string]string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string)
	var walk func(prefix string, raw json.RawMessage) error
	walk = func(prefix string, raw json.RawMessage) error {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			out[prefix] = string(raw)
			return nil
		}
		for k, v := range obj {
			if prefix != "" {
				k = prefix + "." + k
			}
			if err := walk(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk("", b)
}

// readResume reads and checks everything resuming dir needs: config.json
// against cfg (whose vocabulary sizes it fills in), vocab.json, data.json,
// state.json, the step recorded in each checkpoint file and the digests
// recorded in model.safetensors. It writes nothing.
func readResume(dir string, cfg *Config, o *Options) (*resumePoint, error) {
	cfgPath := filepath.Join(dir, ConfigFile)
	if _, err := os.Stat(cfgPath); errors.Is(err, fs.ErrNotExist) {
		// config.json is written last when a run starts: without it
		// there is no run to continue.
		return nil, fmt.Errorf("%s holds no run to resume (no %s): start one without --resume (with --force if the folder holds leftovers)", dir, ConfigFile)
	}
	var saved Config
	if err := readJSONStrict(cfgPath, &saved); err != nil {
		return nil, err
	}
	if err := saved.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	cfg.Model.SrcVocab, cfg.Model.TgtVocab = saved.Model.SrcVocab, saved.Model.TgtVocab
	changes, err := ConfigChanges(saved, *cfg)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if !slices.Contains(ResumableKeys, c.Key) {
			return nil, fmt.Errorf("%s is %s in %s, %s asked for: a resume keeps the run's settings except %s",
				c.Key, c.From, cfgPath, c.To, strings.Join(ResumableKeys, ", "))
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	vocabPath := filepath.Join(dir, VocabFile)
	v, err := models.ReadVocab(vocabPath)
	if err != nil {
		return nil, err
	}
	if len(v.Source) != saved.Model.SrcVocab || len(v.Target) != saved.Model.TgtVocab {
		return nil, fmt.Errorf("%s has %d/%d tokens, %s says %d/%d", vocabPath,
			len(v.Source), len(v.Target), cfgPath, saved.Model.SrcVocab, saved.Model.TgtVocab)
	}
	rp := &resumePoint{vocab: v, changes: changes}
	vb, err := data.ReadFileLimit(vocabPath, data.VocabFile)
	if err != nil {
		return nil, err
	}
	rp.vocabDigest = sha256Hex(vb)
	if len(changes) > 0 {
		if rp.config, err = cfg.Marshal(); err != nil {
			return nil, err
		}
	}
	statePath := checkpointPath(dir, StateFile)
	modelPath, optimPath, bestPath := checkpointPath(dir, ModelFile), checkpointPath(dir, OptimFile), checkpointPath(dir, BestFile)
	if !data.Exists(statePath) {
		// Stopped before its first checkpoint: start again at step 0.
		for _, p := range []string{modelPath, optimPath, bestPath} {
			if data.Exists(p) {
				return nil, fmt.Errorf("%w: %s exists but %s does not", ErrInconsistent, p, statePath)
			}
		}
		return rp, checkData(dir, o, rp, nil)
	}
	sb, err := readJSONBytes(statePath, &rp.state)
	if err != nil {
		return nil, err
	}
	st := &rp.state
	if err := st.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath, err)
	}
	if st.Step > cfg.Steps {
		return nil, fmt.Errorf("%s: the run is at step %d, past the %d steps asked for", statePath, st.Step, cfg.Steps)
	}
	want := []struct {
		path string
		step int
	}{{modelPath, st.Step}, {optimPath, st.Step}}
	if st.BestStep > 0 || data.Exists(bestPath) {
		want = append(want, struct {
			path string
			step int
		}{bestPath, st.BestStep})
	}
	var meta map[string]string
	for i, w := range want {
		got, m, err := fileMeta(w.path)
		if err != nil {
			return nil, err
		}
		if got != w.step {
			return nil, fmt.Errorf("%w: %s holds step %d, %s says %d", ErrInconsistent, w.path, got, statePath, w.step)
		}
		if i == 0 {
			meta = m
		}
	}
	if _, ok := meta[metaConfig]; !ok {
		// Written before checkpoints recorded digests: nothing to
		// compare with until this run's next checkpoint.
		o.Progress.Notef("warning: %s records no digests (an older compbench wrote it): edits of %s, %s, %s and %s cannot be detected",
			modelPath, ConfigFile, VocabFile, DataFileName, StateFile)
		meta = nil
	}
	if err := checkData(dir, o, rp, meta); err != nil {
		return nil, err
	}
	if meta != nil {
		cd, err := configDigest(saved)
		if err != nil {
			return nil, err
		}
		err = checkDigests(modelPath, st.Step, []digestCheck{
			{cfgPath, cd, meta[metaConfig], "a resume changes settings only through --" + strings.Join(resumableFlagNames(), ", --") + "; put the file back, or start a new run"},
			{vocabPath, rp.vocabDigest, meta[metaVocab], "put the file back: a run's vocabulary cannot change"},
			{statePath, sha256Hex(sb), meta[metaState], "put the file back: only a checkpoint writes it"},
		})
		if err != nil {
			return nil, err
		}
	}
	rp.model, rp.optim = modelPath, optimPath
	return rp, nil
}

// resumableFlagNames are the command-line flags of ResumableKeys.
func resumableFlagNames() []string {
	out := make([]string, len(ResumableKeys))
	for i, k := range ResumableKeys {
		out[i] = strings.ReplaceAll(k, "_", "-")
	}
	return out
}

// checkData compares the data's fingerprints with the run's data.json,
// and data.json with the digest its checkpoint recorded (meta; nil: none
// to compare with). It sets what the resumed run records: rp.data when
// data.json is to be written anew, and rp.dataDigest.
func checkData(dir string, o *Options, rp *resumePoint, meta map[string]string) error {
	p := filepath.Join(dir, DataFileName)
	var saved dataFiles
	b, err := readJSONBytes(p, &saved)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return err
	}
	if !missing {
		rp.dataDigest = sha256Hex(b)
	}
	if o.Data == nil {
		// The caller does not fingerprint its data (fine-tuning): keep
		// data.json as it is.
		return nil
	}
	// record warns of a change --allow-data-change allowed and records
	// the data given in a new data.json.
	record := func(format string, args ...any) error {
		o.Progress.Notef("warning: "+format+"; the run will not match an uninterrupted one", args...)
		b, err := dataJSON(o.Data)
		rp.data, rp.dataDigest = o.Data, sha256Hex(b)
		return err
	}
	switch {
	case missing && !o.AllowDataChange:
		return fmt.Errorf("%s is missing, so the data cannot be checked: put it back, or pass --allow-data-change to resume on the data given (recorded in a new %s)", p, DataFileName)
	case missing:
		return record("%s is missing: the data given is recorded in a new one", p)
	case meta != nil && rp.dataDigest != meta[metaData] && !o.AllowDataChange:
		return checkDigests(checkpointPath(dir, ModelFile), rp.state.Step, []digestCheck{{p, rp.dataDigest, meta[metaData],
			"put the file back, or pass --allow-data-change to resume on the data given (recorded anew)"}})
	case meta != nil && rp.dataDigest != meta[metaData]:
		return record("%s changed since the last checkpoint: the data given is recorded anew", p)
	}
	if d := dataChange(saved.Files, o.Data); d != "" {
		if !o.AllowDataChange {
			return fmt.Errorf("the data changed: %s; pass --allow-data-change to resume on it anyway", d)
		}
		return record("the data changed: %s", d)
	}
	return nil
}

// fileMeta is the step recorded in a checkpoint file's metadata, and the
// metadata; only its header is read.
func fileMeta(path string) (int, map[string]string, error) {
	r, err := safetensors.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil, fmt.Errorf("%w: %w", ErrInconsistent, err)
		}
		return 0, nil, fmt.Errorf("corrupt checkpoint: %w", err)
	}
	defer r.Close()
	s, ok := r.Metadata[metaStep]
	if !ok {
		return 0, nil, fmt.Errorf("%w: %s records no step in its metadata", ErrInconsistent, path)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, nil, fmt.Errorf("%w: %s records step %q", ErrInconsistent, path, s)
	}
	return n, r.Metadata, nil
}

// dataJSON is data.json's bytes for files.
func dataJSON(files []DataFile) ([]byte, error) {
	b, err := json.MarshalIndent(dataFiles{Files: files}, "", "  ")
	return append(b, '\n'), err
}

// writeData records the data's fingerprints in dir.
func writeData(dir string, files []DataFile) error {
	b, err := dataJSON(files)
	if err != nil {
		return err
	}
	return replaceSynced(filepath.Join(dir, DataFileName), bytesFill(b))
}
