// Package split re-splits a pool of records into train, dev and test so the
// test set measures a named kind of generalization: random, length,
// template (Finegan-Dollak et al.; Bogin et al. App. B.1), mcd (Keysers et
// al. §4), tmcd (Shaw et al. 2021) and likelihood (Godbole & Jia §3) splits,
// with the statistics of Keysers et al. §2.1 for any train/test pair.
package split

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"compbench/data"
	"compbench/data/structure"
	"compbench/provenance"
)

// Result is a finished split: ids per part, the method's parameters, and the
// statistics of train against test.
type Result struct {
	// Method is the split method's name ("mcd").
	Method string `json:"method"`
	// Params are the method's settings, a struct that marshals to JSON.
	Params any `json:"params"`
	// Train lists the training ids in pool order.
	Train []string `json:"train"`
	// Dev lists the development ids in pool order (may be empty).
	Dev []string `json:"dev"`
	// Test lists the test ids in pool order.
	Test []string `json:"test"`
	// Stats compares train and test.
	Stats Stats `json:"stats"`
	// Provenance records the build, command line and input files that
	// made the split (nil: not recorded, as in library use and tests).
	Provenance *provenance.Record `json:"provenance,omitempty"`
}

// Parts names the files Write creates inside its folder.
var Parts = []string{"train", "dev", "test"}

// Files are the file names Write creates inside its folder.
func Files() []string {
	out := make([]string, 0, len(Parts)+1)
	for _, p := range Parts {
		out = append(out, p+".jsonl")
	}
	return append(out, "split.json")
}

// Write writes DIR/train.jsonl, DIR/dev.jsonl, DIR/test.jsonl and
// DIR/split.json all-or-nothing. pool supplies the records by id; every id
// of res must be in pool and in at most one part.
func Write(dir string, res *Result, pool []data.Record, overwrite bool) error {
	byID := make(map[string]int, len(pool))
	for i := range pool {
		byID[pool[i].ID] = i
	}
	seen := make(map[string]string, len(pool))
	set := data.NewOutputSet(overwrite)
	for pi, ids := range [][]string{res.Train, res.Dev, res.Test} {
		w, err := set.Create(filepath.Join(dir, Parts[pi]+".jsonl"))
		if err != nil {
			return err
		}
		enc := data.NewEncoder(w)
		for _, id := range ids {
			i, ok := byID[id]
			if !ok {
				set.Abort()
				return fmt.Errorf("split: id %q is not in the pool", id)
			}
			if prev, dup := seen[id]; dup {
				set.Abort()
				return fmt.Errorf("split: id %q is in both %s and %s", id, prev, Parts[pi])
			}
			seen[id] = Parts[pi]
			if err := enc.Encode(&pool[i]); err != nil {
				set.Abort()
				return err
			}
		}
	}
	w, err := set.Create(filepath.Join(dir, "split.json"))
	if err != nil {
		return err
	}
	b, err := res.marshal()
	if err != nil {
		set.Abort()
		return fmt.Errorf("split.json: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		set.Abort()
		return err
	}
	return set.Commit()
}

// Assignment is a split in pool indices, before ids are attached.
type Assignment struct {
	// Train, Dev and Test hold pool indices, each sorted ascending.
	Train, Dev, Test []int
}

// ids maps indices to record ids.
func ids(pool []data.Record, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = pool[j].ID
	}
	return out
}

// marshal writes split.json with one top-level field per line and each id
// list on a single line, so the file stays readable at 100,000 ids.
func (r *Result) marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	fields := []struct {
		key string
		v   any
	}{
		{"method", r.Method}, {"params", r.Params}, {"train", nonNil(r.Train)},
		{"dev", nonNil(r.Dev)}, {"test", nonNil(r.Test)}, {"stats", r.Stats},
	}
	if r.Provenance != nil {
		fields = append(fields, struct {
			key string
			v   any
		}{"provenance", r.Provenance})
	}
	for i, f := range fields {
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		fmt.Fprintf(&b, " %q: %s", f.key, v)
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{} // "dev": [] rather than null
	}
	return s
}

// NewResult attaches ids and statistics (train against test) to an
// assignment; ix may be nil when there are no program trees.
func NewResult(method string, params any, pool []data.Record, ix *structure.Index, a Assignment, anon Anonymizer) *Result {
	return &Result{Method: method, Params: params, Train: ids(pool, a.Train), Dev: ids(pool, a.Dev),
		Test: ids(pool, a.Test), Stats: statsOf(pool, ix, a, anon)}
}
