package cfq

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
)

// ExportSplit writes the split folder dir (train.jsonl, dev.jsonl,
// test.jsonl; dev may be missing) to out as a published split file whose
// indexes count the records of pool in file order. The caller has checked
// that out is none of the inputs.
func ExportSplit(pool, dir, out string, force bool) (Summary, error) {
	if err := data.CheckFree(out, force); err != nil {
		return Summary{}, err
	}
	recs, err := data.ReadRecords(pool)
	if err != nil {
		return Summary{}, err
	}
	index := make(map[string]int, len(recs))
	for i := range recs {
		index[recs[i].ID] = i
	}
	var split Split
	for p, dst := range []*[]int{&split.Train, &split.Dev, &split.Test} {
		if *dst, err = partIndexes(filepath.Join(dir, PartNames[p+1]+".jsonl"), p == 1, index, pool); err != nil {
			return Summary{}, err
		}
	}
	if _, err := split.Parts(len(recs)); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", dir, err)
	}
	set := data.NewOutputSet(force)
	w, err := set.Create(out)
	if err != nil {
		return Summary{}, err
	}
	if err := split.Encode(w); err != nil {
		set.Abort()
		return Summary{}, err
	}
	if err := set.Commit(); err != nil {
		return Summary{}, err
	}
	sum := Summary{Records: len(recs)}
	sum.Train, sum.Dev, sum.Test = split.Sizes()
	return sum, nil
}

// partIndexes maps the records of one part file to their pool indexes; an
// optional part (dev) may be missing or empty.
func partIndexes(path string, optional bool, index map[string]int, pool string) ([]int, error) {
	if _, err := os.Stat(path); err != nil && optional {
		return nil, nil
	}
	part, err := data.ReadRecords(path)
	if err != nil && !(optional && strings.Contains(err.Error(), "no records")) {
		return nil, err
	}
	var out []int
	for _, r := range part {
		i, ok := index[r.ID]
		if !ok {
			return nil, fmt.Errorf("%s: id %q is not in %s", path, r.ID, pool)
		}
		out = append(out, i)
	}
	return out, nil
}
