package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"compbench/data"
	"compbench/eval"
	"compbench/sweep"
	"compbench/train"
)

// Load reads sweep folders (OUT with sweep.json and cells/) and run folders
// (config.json and metrics.jsonl) into one report: several run folders of
// one model and data, differing only in their seeds, are one row.
func Load(paths ...string) (*Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no sweep or run folder to report")
	}
	if err := Distinct(paths); err != nil {
		return nil, err
	}
	r := &Report{splits: map[string]*SplitStats{}}
	var titles []string
	var loose []int // runs read from plain run folders
	for src, path := range paths {
		switch {
		case data.Exists(filepath.Join(path, sweep.SpecFile)):
			title, err := r.loadSweep(path, src)
			if err != nil {
				return nil, err
			}
			titles = append(titles, title)
		case data.Exists(filepath.Join(path, train.ConfigFile)):
			plain, err := r.loadRun(path, src)
			if err != nil {
				return nil, err
			}
			if plain {
				loose = append(loose, len(r.Runs)-1)
			}
			titles = append(titles, filepath.Base(filepath.Clean(path)))
		default:
			return nil, fmt.Errorf("%s is neither a sweep folder (%s) nor a run folder (%s)", path, sweep.SpecFile, train.ConfigFile)
		}
	}
	if err := r.varyLoose(loose); err != nil {
		return nil, err
	}
	r.Title = titles[0]
	if len(titles) > 1 {
		r.Title = strings.Join(titles, ", ")
		if len(titles) > 3 {
			r.Title = fmt.Sprintf("%s and %d more", strings.Join(titles[:2], ", "), len(titles)-2)
		}
	}
	r.group()
	return r, nil
}

// loadSweep adds a sweep's finished cells and its datasets' split
// statistics, and returns its title.
func (r *Report) loadSweep(out string, src int) (string, error) {
	spec, err := sweep.LoadRecorded(out)
	if err != nil {
		return "", err
	}
	title := spec.Name
	if title == "" {
		title = filepath.Base(filepath.Clean(out))
	}
	for _, c := range spec.Cells() {
		dir := c.Dir(out)
		if sweep.StateOf(dir) != sweep.Finished {
			r.Unfinished = append(r.Unfinished, c.Name)
			continue
		}
		res, err := sweep.ReadResult(dir)
		if err != nil {
			return "", err
		}
		curve, err := ReadMetrics(filepath.Join(dir, train.MetricsFile))
		if err != nil {
			return "", err
		}
		r.Runs = append(r.Runs, Run{Dir: dir, Result: *res, Curve: curve, source: src})
		if _, seen := r.splits[c.Data]; !seen {
			d, _ := spec.Dataset(c) // generated tasks have none: no statistics
			// A recorded sweep's paths are absolute; others are read
			// from OUT.
			for _, p := range []*string{&d.Split, &d.Dir} {
				if *p != "" && !filepath.IsAbs(*p) {
					*p = filepath.Join(out, *p)
				}
			}
			if r.splits[c.Data], err = readSplitStats(d.Split, d.Dir); err != nil {
				return "", err
			}
		}
	}
	return title, nil
}

// loadRun adds one run folder: its result.json when it is a sweep cell,
// else what its state.json, metrics.jsonl and test.eval.json say, with
// the data named by the folder of its training file (data.json). plain
// is true in the second case.
func (r *Report) loadRun(dir string, src int) (plain bool, err error) {
	curve, err := ReadMetrics(filepath.Join(dir, train.MetricsFile))
	if err != nil {
		return false, err
	}
	run := Run{Dir: dir, Curve: curve, source: src}
	trainFile, err := trainPath(dir)
	if err != nil {
		return false, err
	}
	if res, err := sweep.ReadResult(dir); err == nil {
		run.Result = *res
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	} else {
		plain = true
		cfg, err := train.LoadConfig(filepath.Join(dir, train.ConfigFile), train.DefaultConfig())
		if err != nil {
			return false, err
		}
		st, _, err := sweep.ReadTrainState(dir)
		if err != nil {
			return false, err
		}
		name := "-"
		if trainFile != "" {
			name = filepath.Base(filepath.Dir(trainFile))
		}
		run.Result = sweep.Result{Cell: sweep.Cell{Name: filepath.Base(filepath.Clean(dir)), Data: name, Model: cfg.Model.Variant, Variant: cfg.Model.Variant, Seed: cfg.Seed},
			Steps: st.Step, BestStep: st.BestStep, DevEM: -1, TestEM: -1}
		for _, l := range curve {
			if l.DevEM != nil {
				run.Result.DevEM = st.BestEM
			}
			if l.Loss != nil {
				run.Result.TrainLoss = *l.Loss
			}
		}
		if b, err := data.ReadFileLimit(filepath.Join(dir, sweep.TestEval), data.ConfigFile); err == nil {
			var s eval.Summary
			if json.Unmarshal(b, &s) == nil {
				run.Result.TestEM = s.Accuracy
			}
		}
	}
	name := run.Result.Cell.Data
	if _, seen := r.splits[name]; !seen && trainFile != "" {
		if r.splits[name], err = readSplitStats("", filepath.Dir(trainFile)); err != nil {
			return false, err
		}
	}
	if s := r.splits[name]; s != nil && run.Result.CompoundDivergence == nil {
		run.Result.CompoundDivergence = s.Stats.CompoundDivergence
	}
	r.Runs = append(r.Runs, run)
	return plain, nil
}

// trainPath is the training file a run's data.json names, "" when the
// run has none or the file has moved: the report then knows no split.
func trainPath(dir string) (string, error) {
	b, err := data.ReadFileLimit(filepath.Join(dir, train.DataFileName), data.ConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var d struct {
		Files []struct{ Role, Path string } `json:"files"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, train.DataFileName), err)
	}
	for _, f := range d.Files {
		if f.Role == "train" && data.Exists(f.Path) {
			return f.Path, nil
		}
	}
	return "", nil
}

// varyLoose names what tells plain run folders apart: for runs of the
// same data and model, the config.json keys (seed aside) whose values
// differ become the runs' varied values, so that runs trained with other
// settings are not averaged as seeds of one row.
func (r *Report) varyLoose(loose []int) error {
	type key struct{ data, model string }
	byKey := map[key][]int{}
	configs := map[int]map[string]json.RawMessage{}
	for _, i := range loose {
		c := r.Runs[i].Result.Cell
		byKey[key{c.Data, c.Model}] = append(byKey[key{c.Data, c.Model}], i)
		b, err := data.ReadFileLimit(filepath.Join(r.Runs[i].Dir, train.ConfigFile), data.ConfigFile)
		if err != nil {
			return err
		}
		flat := map[string]json.RawMessage{}
		if err := flatten("", b, flat); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(r.Runs[i].Dir, train.ConfigFile), err)
		}
		configs[i] = flat
	}
	for _, runs := range byKey {
		differ := map[string]bool{}
		for _, i := range runs[1:] {
			for k, v := range configs[i] {
				if w, ok := configs[runs[0]][k]; !ok || !bytes.Equal(v, w) {
					differ[k] = true
				}
			}
			for k := range configs[runs[0]] {
				if _, ok := configs[i][k]; !ok {
					differ[k] = true
				}
			}
		}
		delete(differ, "seed")
		keys := make([]string, 0, len(differ))
		for k := range differ {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, i := range runs {
			c := &r.Runs[i].Result.Cell
			for _, k := range keys {
				v, ok := configs[i][k]
				if !ok {
					v = json.RawMessage(`"-"`)
				}
				c.Vary = append(c.Vary, sweep.Setting{Key: k, Value: v})
			}
		}
	}
	return nil
}

// flatten puts the leaves of a JSON object into out by dotted key
// ("model.dim"), each in compact form.
func flatten(prefix string, raw []byte, out map[string]json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return err
		}
		out[prefix] = b.Bytes()
		return nil
	}
	for k, v := range obj {
		if prefix != "" {
			k = prefix + "." + k
		}
		if err := flatten(k, v, out); err != nil {
			return err
		}
	}
	return nil
}

// ReadMetrics reads metrics.jsonl (a missing file is an empty curve).
func ReadMetrics(path string) ([]MetricLine, error) {
	f, err := data.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []MetricLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var l MetricLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		lines = append(lines, l)
	}
	return lines, sc.Err()
}

// Distinct refuses a folder given twice, or inside a sweep folder also
// given (one of its cells): its runs would count twice as seeds.
func Distinct(paths []string) error {
	real := make([]string, len(paths))
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if e, err := filepath.EvalSymlinks(a); err == nil {
			a = e
		}
		real[i] = a
	}
	for i := range real {
		for j := range real {
			if i == j {
				continue
			}
			if real[i] == real[j] && i < j {
				return fmt.Errorf("%s and %s are the same folder: its runs would count twice", paths[i], paths[j])
			}
			// A run inside a run folder (its ft/) is a run of its own.
			if strings.HasPrefix(real[j], real[i]+string(filepath.Separator)) && data.Exists(filepath.Join(real[i], sweep.SpecFile)) {
				return fmt.Errorf("%s is inside the sweep %s, also given: its runs would count twice", paths[j], paths[i])
			}
		}
	}
	return nil
}
