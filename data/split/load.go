package split

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"compbench/data"
	// SCAN's text format (.txt) registers itself with data's readers; a
	// pool may be one of SCAN's own files.
	_ "compbench/data/scan"
)

// LoadPool reads the records to split, in any format data.ReadRecords
// knows: JSONL; "source<TAB>target[<TAB>category]" lines (.tsv); SCAN's
// "IN: ... OUT: ..." lines (.txt), with rule trees. Records of a .tsv or
// .txt file get ids STEM-N (tasks.txt: tasks-1, tasks-2, ...). A record
// without an input or an output is an error: it would be split, and
// trained or scored on, as "".
func LoadPool(path string) ([]data.Record, error) {
	pool, err := data.ReadRecords(path)
	if err != nil {
		return nil, err
	}
	if err := data.RequireText(pool, true); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pool, nil
}

// legacyPrefixes are the id stems that .tsv and .txt pools had before ids
// were named after the file, by extension.
var legacyPrefixes = map[string]string{".tsv": "line", ".txt": "scan"}

// LoadSplitPool reads the pool of split file f from path. A split made
// before ids were named after the pool file lists ids line-N (.tsv) or
// scan-N (.txt); when f does and the pool's ids are STEM-N, the pool's ids
// are renamed back, line for line, so such a split still resolves.
func LoadSplitPool(f *SplitFile, path string) ([]data.Record, error) {
	pool, err := data.ReadRecords(path)
	if err != nil {
		return nil, err
	}
	legacy, ok := legacyPrefixes[strings.ToLower(filepath.Ext(path))]
	if !ok || data.FormatOf(path) == data.FormatJSONL {
		return pool, nil
	}
	first := firstID(f)
	if !isLineID(first, legacy) || isLineID(first, data.IDPrefix(path)) {
		return pool, nil
	}
	stem := data.IDPrefix(path) + "-"
	for i := range pool {
		pool[i].ID = legacy + "-" + strings.TrimPrefix(pool[i].ID, stem)
	}
	return pool, nil
}

// firstID is the first id f lists, or "".
func firstID(f *SplitFile) string {
	for _, ids := range [][]string{f.Train, f.Dev, f.Test} {
		if len(ids) > 0 {
			return ids[0]
		}
	}
	return ""
}

// isLineID reports whether id is stem-N with N a positive line number.
func isLineID(id, stem string) bool {
	n, ok := strings.CutPrefix(id, stem+"-")
	if !ok {
		return false
	}
	v, err := strconv.Atoi(n)
	return err == nil && v > 0
}
