package train

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"compbench/data"
)

// ReadData reads the training records and, when devPath is given, the dev
// records, refusing records without an input or an output.
func ReadData(trainPath, devPath string) (recs, dev []data.Record, err error) {
	if recs, err = data.ReadRecords(trainPath); err != nil {
		return nil, nil, fmt.Errorf("train: %w", err)
	}
	if devPath != "" {
		if dev, err = data.ReadRecords(devPath); err != nil {
			return nil, nil, fmt.Errorf("dev: %w", err)
		}
	}
	if err := data.RequireText(recs, true); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", trainPath, err)
	}
	if err := data.RequireText(dev, true); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", devPath, err)
	}
	return recs, dev, nil
}

// Fingerprints are the size and SHA-256 of the data files, for data.json.
func Fingerprints(trainPath, devPath string) ([]DataFile, error) {
	tf, err := Fingerprint("train", trainPath)
	if err != nil {
		return nil, err
	}
	files := []DataFile{tf}
	if devPath != "" {
		df, err := Fingerprint("dev", devPath)
		if err != nil {
			return nil, err
		}
		files = append(files, df)
	}
	return files, nil
}

// Print writes the one-line summary of the run in dir.
func (r *Result) Print(w io.Writer, dir string) {
	fmt.Fprintf(w, "run %s: %d steps in %s (%.0f tokens/s), training loss %.4f", dir, r.Steps, r.Elapsed.Round(1e9), r.TokensPerSecond(), r.TrainLoss)
	if r.DevEM >= 0 {
		fmt.Fprintf(w, ", best dev exact match %.2f%% (loss %.4f) at step %d", 100*r.DevEM, r.DevLoss, r.BestStep)
	}
	fmt.Fprintln(w)
}

// ResumeChange is the first change that setting key to value would make
// to saved, a resumed run's config, outside ResumableKeys (nil: none). A
// resume keeps every setting that shapes the weights' trajectory, so a
// resumed run ends where an uninterrupted one would.
func ResumeChange(saved Config, key string, value any) (*Change, error) {
	if slices.Contains(ResumableKeys, key) {
		return nil, nil
	}
	c := saved
	if err := c.SetKey(key, value); err != nil {
		return nil, err
	}
	ch, err := ConfigChanges(saved, c)
	if err != nil || len(ch) == 0 {
		return nil, err
	}
	return &ch[0], nil
}

// ReadSplit reads the split folder dir's train.jsonl, dev.jsonl and
// test.jsonl into e.
func (e *Experiment) ReadSplit(dir string) error {
	var err error
	for _, f := range []struct {
		name string
		recs *[]data.Record
	}{{"train.jsonl", &e.Train}, {"dev.jsonl", &e.Dev}, {"test.jsonl", &e.Test}} {
		if *f.recs, err = data.ReadRecords(filepath.Join(dir, f.name)); err != nil {
			return err
		}
	}
	return nil
}

// WriteResults writes Dir/results.md: a line about the data and the seed,
// then the table of rows.
func (e *Experiment) WriteResults(about string, seed uint64, table string) error {
	return data.WriteOutput(filepath.Join(e.Dir, "results.md"), e.Force, func(w io.Writer) error {
		fmt.Fprintf(w, "%s, %d train / %d test examples, seed %d\n\n", about, len(e.Train), len(e.Test), seed)
		_, err := io.WriteString(w, table)
		return err
	})
}
