package eval

import (
	"fmt"

	"compbench/data"
)

// Models scores several prediction files against the same gold records
// and returns their correctness matrix (rows in gold order) and each
// model's summary.
func Models(gold []data.Record, predPaths []string, allowMissing bool, opt Options) (*Matrix, []Summary, error) {
	cols := make([][]bool, len(predPaths))
	sums := make([]Summary, len(predPaths))
	for k, path := range predPaths {
		ps, err := ReadPredictions(path)
		if err != nil {
			return nil, nil, err
		}
		j, err := Join(gold, ps, allowMissing)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		ex, s, err := Score(j, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		col := make([]bool, len(ex))
		for i := range ex {
			col[i] = ex[i].Correct
		}
		cols[k], sums[k] = col, s
	}
	m, err := NewMatrix(cols)
	return m, sums, err
}
