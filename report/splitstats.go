package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"compbench/data"
	"compbench/data/split"
)

// SplitStats are a dataset's split statistics and where they come from.
type SplitStats struct {
	// Method is split.json's method ("mcd", "random", ...), "" from a
	// stats file.
	Method string
	// File is the file read.
	File  string
	Stats split.Stats
}

// StatsFile is the name the report looks for beside a dataset without
// split.json: what compbench stats --json prints, saved there (for a
// published split measured with --pool, which has no split.json).
const StatsFile = "stats.json"

// readSplitStats reads a dataset's split.json (path, else dir/split.json),
// else dir/stats.json; nil when it has neither.
func readSplitStats(path, dir string) (*SplitStats, error) {
	if path == "" && dir != "" {
		path = filepath.Join(dir, "split.json")
	}
	if path != "" {
		b, err := data.ReadFileLimit(path, data.SplitFile)
		if err == nil {
			var f struct {
				Method string      `json:"method"`
				Stats  split.Stats `json:"stats"`
			}
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return &SplitStats{Method: f.Method, File: path, Stats: f.Stats}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if dir == "" {
		return nil, nil
	}
	p := filepath.Join(dir, StatsFile)
	b, err := data.ReadFileLimit(p, data.ConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s split.Stats
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &SplitStats{File: p, Stats: s}, nil
}

// splitHeader names the columns of the split statistics table.
var splitHeader = []string{"data", "method", "train", "dev", "test", "D_A", "D_C", "input length ratio", "output length ratio", "input pattern coverage", "output pattern coverage"}

// dash marks a statistic the dataset's files do not give.
const dash = "—"

// splitRows are the split statistics of each dataset of the report, in
// table order; ok is false when no dataset has any, and the table is
// left out.
func (r *Report) splitRows() (rows [][]string, ok bool) {
	seen := map[string]bool{}
	for gi := range r.Groups {
		name := r.Groups[gi].Cell.Data
		if r.Groups[gi].Pooled || seen[name] {
			continue
		}
		seen[name] = true
		s := r.splits[name]
		if s == nil {
			row := []string{name}
			for range splitHeader[1:] {
				row = append(row, dash)
			}
			rows = append(rows, row)
			continue
		}
		ok = true
		st := s.Stats
		method, dev := s.Method, strconv.Itoa(st.DevSize)
		if method == "" { // compbench stats compares train and test only
			method, dev = dash, dash
		}
		rows = append(rows, []string{name, method,
			count(st.TrainSize), thousands(dev), count(st.TestSize),
			optFixed(st.AtomDivergence, 3), optFixed(st.CompoundDivergence, 3),
			ratio(st.InputLengthRatio), ratio(st.OutputLengthRatio),
			percent(st.InputPatternCoverage), percent(st.OutputPatternCoverage)})
	}
	return rows, ok
}

// splitNote is the line under the split statistics table.
const splitNote = "From each dataset's split.json (written by compbench split), or the stats.json beside it (compbench stats --json); " + dash + " where neither gives the value. " +
	"D_A and D_C are Keysers et al.'s atom and compound divergence between train and test; length ratios are mean train length / mean test length; " +
	"pattern coverage is the share of distinct test patterns (anonymised inputs or outputs) that occur in train."

func count(n int) string {
	if n == 0 {
		return dash
	}
	return thousands(strconv.Itoa(n))
}

func optFixed(v *float64, prec int) string {
	if v == nil {
		return dash
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func ratio(v float64) string {
	if v == 0 {
		return dash
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func percent(v float64) string {
	return strconv.FormatFloat(100*v, 'f', 1, 64) + "%"
}
