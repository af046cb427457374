// Package sweep describes a grid of training runs (a paper's table) and
// runs it: the sweep file and its cells, the local runner with at most N
// concurrent cells, and the Slurm job array that runs one cell per task.
// The stages of a cell are ordinary compbench commands, so a cell folder is
// an ordinary run folder.
package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"compbench/data"
	"compbench/data/tasks"
	"compbench/models"
)

// Spec is a sweep file. The named axes (data: Tasks or Datasets; Models;
// Vary; Seeds) multiply into cells; everything else is fixed.
type Spec struct {
	// Name labels the sweep in reports.
	Name string `json:"name"`
	// Models is an axis of models: a variant name (compbench train
	// --model), or an object with its own config (see Model).
	Models []Model `json:"models"`
	// Tasks is an axis of generated benchmarks: each cell runs
	// compbench gen DOMAIN --task T with Generate's sizes.
	Tasks []string `json:"tasks,omitempty"`
	// Datasets is an axis of existing train/dev/test files (splits).
	Datasets []Dataset `json:"datasets,omitempty"`
	// Seeds is the axis of model seeds (initialisation, batch order,
	// dropout); the report gives mean and standard deviation over it.
	Seeds []uint64 `json:"seeds"`
	// Vary holds axes over training-config fields, in order.
	Vary []ConfigAxis `json:"vary,omitempty"`
	// Preset names the train preset (train.Presets) every model starts
	// from before Config and its own config are merged over it; a
	// model's own preset wins.
	Preset string `json:"preset,omitempty"`
	// Config is the base training config, as a --config file of
	// compbench train: a partial object over the model's defaults.
	Config json.RawMessage `json:"config,omitempty"`
	// Generate sets the generated data of Tasks.
	Generate Generate `json:"generate"`
	// Finetune, when set, fine-tunes each trained cell on the few-shot
	// set and predicts the test set again.
	Finetune *Finetune `json:"finetune,omitempty"`
	// Device runs training, fine-tuning and decoding on it (compbench
	// train --device: cpu, cuda, cuda:N; empty: cpu).
	Device string `json:"device,omitempty"`
	// Last decodes with the last checkpoint instead of the best on dev
	// (compbench predict --last).
	Last bool `json:"last,omitempty"`
	// Beam is the beam size of prediction (0: 1, greedy).
	Beam int `json:"beam,omitempty"`
	// Execute scores RobustFill programs by running them (compbench eval
	// --execute) besides exact match.
	Execute bool `json:"execute,omitempty"`
	// Easiness computes each test example's predicted easiness (compbench
	// easiness, 2-LS) and the ROC AUC against the zero-shot predictions'
	// correctness; the report draws the ROC curves.
	Easiness bool `json:"easiness,omitempty"`
	// EasinessTree is compbench easiness --tree: where the programs come
	// from (empty: auto; bracketed for COVR's outputs).
	EasinessTree string `json:"easiness_tree,omitempty"`
}

// Model is one value of the Models axis. Written as a plain string it is
// the variant alone; as an object it may carry a config merged over the
// sweep's (the LSTM and the Transformer of a table seldom share a learning
// rate) and a name for cell names and reports.
type Model struct {
	// Name labels the model (default: Variant).
	Name    string `json:"name,omitempty"`
	Variant string `json:"variant"`
	// Preset, when set, replaces the sweep's Preset for this model.
	Preset string `json:"preset,omitempty"`
	// Config is a partial training config over the sweep's Config.
	Config json.RawMessage `json:"config,omitempty"`
}

// Label is the model's name in cells and reports.
func (m Model) Label() string {
	if m.Name != "" {
		return m.Name
	}
	return m.Variant
}

// UnmarshalJSON reads a variant name or a strict object.
func (m *Model) UnmarshalJSON(b []byte) error {
	var v string
	if json.Unmarshal(b, &v) == nil {
		*m = Model{Variant: v}
		return nil
	}
	type plain Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	*m = Model(p)
	return nil
}

// MarshalJSON writes a bare variant as a string.
func (m Model) MarshalJSON() ([]byte, error) {
	if m.Name == "" && m.Preset == "" && len(m.Config) == 0 {
		return json.Marshal(m.Variant)
	}
	type plain Model
	return json.Marshal(plain(m))
}

// Dataset is one value of the Datasets axis. Dir, when set, supplies
// train.jsonl, dev.jsonl, test.jsonl, finetune.jsonl and split.json for
// the paths left empty, where those files exist.
type Dataset struct {
	Name string `json:"name,omitempty"`
	// Glob, when set, stands for one dataset per folder it matches
	// (sorted), named by the folder's base name after Name as a prefix:
	// the 124 grammar splits of a COVR table in one entry.
	Glob     string `json:"glob,omitempty"`
	Dir      string `json:"dir,omitempty"`
	Train    string `json:"train,omitempty"`
	Dev      string `json:"dev,omitempty"`
	Test     string `json:"test,omitempty"`
	Finetune string `json:"finetune,omitempty"`
	// Split is the split.json of compbench split: its compound
	// divergence goes into the report.
	Split string `json:"split,omitempty"`
}

// ConfigAxis varies one training-config field: Key is its JSON name,
// dotted for the model's fields ("lr", "model.dim").
type ConfigAxis struct {
	Key    string            `json:"key"`
	Values []json.RawMessage `json:"values"`
}

// Generate is compbench gen's settings for the Tasks axis; zero sizes keep
// gen's defaults.
type Generate struct {
	// Domain is scan (default) or robustfill.
	Domain       string `json:"domain,omitempty"`
	TrainSize    int    `json:"train_size,omitempty"`
	DevSize      int    `json:"dev_size,omitempty"`
	TestSize     int    `json:"test_size,omitempty"`
	FinetuneSize int    `json:"finetune_size,omitempty"`
	// Seed is the data seed (0: 1), the same for every model seed, so
	// the seeds of one cell group share their data.
	Seed uint64 `json:"seed,omitempty"`
	// Discard removes a cell's generated data once the cell is finished
	// (Shi et al.'s 1.28M training examples are 1.3 GB per cell).
	Discard bool `json:"discard,omitempty"`
}

// Finetune is the few-shot stage (compbench finetune).
type Finetune struct {
	Steps int     `json:"steps"`
	LR    float64 `json:"lr,omitempty"`
}

// Load reads a sweep file strictly (unknown keys are errors), resolves its
// paths against the file's folder and checks it.
func Load(path string) (*Spec, error) {
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if err := s.expand(abs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.resolve(abs)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// LoadRecorded reads OUT/sweep.json, the resolved sweep a run recorded,
// without checking its data files: a report or a status may be made where
// the data are not (a copy of OUT on a laptop).
func LoadRecorded(out string) (*Spec, error) {
	path := filepath.Join(out, SpecFile)
	b, err := data.ReadFileLimit(path, data.ConfigFile)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a sweep file's bytes strictly; it does not validate.
func Parse(b []byte) (*Spec, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return &s, nil
}

// expand replaces each glob dataset by the folders it matches.
func (s *Spec) expand(base string) error {
	var out []Dataset
	for _, d := range s.Datasets {
		if d.Glob == "" {
			out = append(out, d)
			continue
		}
		if d.Dir != "" || d.Train != "" || d.Dev != "" || d.Test != "" || d.Finetune != "" || d.Split != "" {
			return fmt.Errorf("datasets: glob %q: give only a glob and a name prefix", d.Glob)
		}
		pat := d.Glob
		if !filepath.IsAbs(pat) {
			pat = filepath.Join(base, pat)
		}
		matches, err := filepath.Glob(pat)
		if err != nil {
			return fmt.Errorf("datasets: glob %q: %w", d.Glob, err)
		}
		n := 0
		for _, m := range matches { // filepath.Glob sorts
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				out = append(out, Dataset{Name: d.Name + filepath.Base(m), Dir: m})
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("datasets: glob %q matches no folder", d.Glob)
		}
	}
	s.Datasets = out
	return nil
}

// resolve makes the dataset paths absolute and fills them from Dir, so a
// cell runs from any working directory (a Slurm node's included).
func (s *Spec) resolve(base string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	s.Config = absPretrained(s.Config, abs)
	for i := range s.Models {
		s.Models[i].Config = absPretrained(s.Models[i].Config, abs)
	}
	for i := range s.Datasets {
		d := &s.Datasets[i]
		d.Dir = abs(d.Dir)
		for _, f := range []struct {
			p    *string
			name string
		}{{&d.Train, "train.jsonl"}, {&d.Dev, "dev.jsonl"}, {&d.Test, "test.jsonl"}, {&d.Finetune, "finetune.jsonl"}, {&d.Split, "split.json"}} {
			*f.p = abs(*f.p)
			if *f.p == "" && d.Dir != "" {
				if p := filepath.Join(d.Dir, f.name); data.Exists(p) {
					*f.p = p
				}
			}
		}
	}
}

// absPretrained makes a config's model.pretrained folder absolute (a
// pretrained model's Hugging Face folder, relative to the sweep file).
// A config that is not such an object is left for Validate to report.
func absPretrained(raw json.RawMessage, abs func(string) string) json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return raw
	}
	var m map[string]json.RawMessage
	var dir string
	if json.Unmarshal(o["model"], &m) != nil || json.Unmarshal(m["pretrained"], &dir) != nil || dir == "" || filepath.IsAbs(dir) {
		return raw
	}
	m["pretrained"], _ = json.Marshal(abs(dir))
	o["model"], _ = json.Marshal(m)
	b, err := json.Marshal(o)
	if err != nil {
		return raw
	}
	return b
}

// Validate checks the axes and builds every cell's training config, so a
// bad key or value is reported before anything runs.
func (s *Spec) Validate() error {
	if len(s.Models) == 0 {
		return errors.New("models: empty axis")
	}
	if len(s.Seeds) == 0 {
		return errors.New("seeds: empty axis")
	}
	switch {
	case len(s.Tasks) == 0 && len(s.Datasets) == 0:
		return errors.New("give a tasks or a datasets axis")
	case len(s.Tasks) > 0 && len(s.Datasets) > 0:
		return errors.New("tasks and datasets exclude each other")
	}
	switch s.Generate.Domain {
	case "", "scan", "robustfill":
	default:
		return fmt.Errorf("generate.domain %q: want scan or robustfill", s.Generate.Domain)
	}
	for _, f := range []struct {
		key string
		n   int
	}{{"train_size", s.Generate.TrainSize}, {"dev_size", s.Generate.DevSize}, {"test_size", s.Generate.TestSize}, {"finetune_size", s.Generate.FinetuneSize}} {
		// 0 is gen's default; a negative count would silently be too.
		if f.n < 0 || f.n > tasks.MaxExamples {
			return fmt.Errorf("generate.%s %d: want 1 to %d examples, or 0 for gen's default", f.key, f.n, tasks.MaxExamples)
		}
	}
	if len(s.Datasets) > 0 && s.Generate != (Generate{}) {
		return errors.New("generate applies to tasks, not datasets")
	}
	for _, t := range s.Tasks {
		if _, err := tasks.Parse(t); err != nil {
			return fmt.Errorf("tasks: %w", err)
		}
	}
	for _, d := range s.Datasets {
		if d.Name == "" {
			return errors.New("datasets: a dataset without a name")
		}
		if d.Dir != "" && (d.Train == "" || d.Test == "") {
			return fmt.Errorf("datasets: %s: %s holds no train.jsonl or test.jsonl", d.Name, d.Dir)
		}
		if d.Train == "" || d.Test == "" {
			return fmt.Errorf("datasets: %s: no train or test file (give train and test, or a dir holding train.jsonl and test.jsonl)", d.Name)
		}
		for _, p := range []string{d.Train, d.Dev, d.Test, d.Finetune, d.Split} {
			if p != "" && !data.Exists(p) {
				return fmt.Errorf("datasets: %s: %s does not exist", d.Name, p)
			}
		}
		if s.Finetune != nil && d.Finetune == "" {
			return fmt.Errorf("datasets: %s: finetune is set but the dataset has no finetune file", d.Name)
		}
	}
	for _, m := range s.Models {
		var c models.Config
		if err := c.ApplyVariant(m.Variant); err != nil {
			return fmt.Errorf("models: %w", err)
		}
	}
	if err := s.checkPresets(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range s.Vary {
		if !configKey.MatchString(a.Key) {
			return fmt.Errorf("vary: bad key %q (want a config field such as lr or model.dim)", a.Key)
		}
		if a.Key == "seed" {
			return errors.New("vary: seed is the seeds axis")
		}
		if seen[a.Key] {
			return fmt.Errorf("vary: %s given twice", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return fmt.Errorf("vary: %s: empty axis", a.Key)
		}
	}
	if s.Finetune != nil && (s.Finetune.Steps < 1 || s.Finetune.LR < 0) {
		return fmt.Errorf("finetune: steps %d must be >= 1 and lr %v >= 0", s.Finetune.Steps, s.Finetune.LR)
	}
	if s.EasinessTree != "" && !s.Easiness {
		return errors.New("easiness_tree goes with easiness: true")
	}
	if s.Device != "" && !deviceName.MatchString(s.Device) {
		return fmt.Errorf("device %q: want cpu, cuda or cuda:N", s.Device)
	}
	if s.Beam < 0 || s.Beam > maxBeam {
		return fmt.Errorf("beam %d: want 0 (greedy) to %d", s.Beam, maxBeam)
	}
	cells := s.Cells()
	names := map[string]bool{}
	for _, c := range cells {
		if names[c.Name] {
			return fmt.Errorf("two cells are named %s: make the axis values differ in letters and digits", c.Name)
		}
		names[c.Name] = true
		if _, err := s.TrainConfig(c); err != nil {
			return fmt.Errorf("cell %s: %w", c.Name, err)
		}
	}
	return nil
}

var deviceName = regexp.MustCompile(`^(cpu|cuda|cuda:[0-9]+)$`)

// maxBeam bounds the sweep's beam: wider than any target vocabulary of
// the benchmarks (predict refuses a beam wider than the run's), and
// within what decoding can hold.
const maxBeam = 1 << 16

var configKey = regexp.MustCompile(`^[a-z_0-9]+(\.[a-z_0-9]+)?$`)

// Cells is the cross product of the axes in a fixed order (data, model,
// vary axes in order, seed), so indices and names are stable.
func (s *Spec) Cells() []Cell {
	type dv struct{ name, task string }
	var ds []dv
	for _, t := range s.Tasks {
		ds = append(ds, dv{t, t})
	}
	for _, d := range s.Datasets {
		ds = append(ds, dv{d.Name, ""})
	}
	varies := [][]Setting{nil}
	for _, a := range s.Vary {
		var next [][]Setting
		for _, prefix := range varies {
			for _, v := range a.Values {
				next = append(next, append(append([]Setting(nil), prefix...), Setting{a.Key, compact(v)}))
			}
		}
		varies = next
	}
	var cells []Cell
	for _, d := range ds {
		for _, m := range s.Models {
			for _, vs := range varies {
				for _, seed := range s.Seeds {
					c := Cell{Index: len(cells), Data: d.name, Task: d.task, Model: m.Label(), Variant: m.Variant, Vary: vs, Seed: seed}
					c.Name = c.name()
					cells = append(cells, c)
				}
			}
		}
	}
	return cells
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// Dataset returns the dataset of a cell of the Datasets axis.
func (s *Spec) Dataset(c Cell) (Dataset, bool) {
	for _, d := range s.Datasets {
		if d.Name == c.Data && c.Task == "" {
			return d, true
		}
	}
	return Dataset{}, false
}

// Marshal gives the resolved spec, as OUT/sweep.json records it.
func (s *Spec) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Find returns the cell named name.
func (s *Spec) Find(name string) (Cell, error) {
	cells := s.Cells()
	for _, c := range cells {
		if c.Name == name {
			return c, nil
		}
	}
	names := make([]string, 0, len(cells))
	for _, c := range cells {
		names = append(names, c.Name)
	}
	sort.Strings(names)
	if len(names) > 6 {
		names = append(names[:6], "...")
	}
	return Cell{}, fmt.Errorf("no cell named %q (cells: %s)", name, strings.Join(names, ", "))
}
