package split

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
	"compbench/data/scan"
)

// LoadPool reads the records to split: JSONL; with a .tsv extension plain
// "source<TAB>target" lines whose records get ids line-N (N counts from 1);
// with a .txt extension the original SCAN text format ("IN: ... OUT: ..."
// lines), whose records get ids scan-N and their rule trees.
func LoadPool(path string) ([]data.Record, error) {
	switch ext := filepath.Ext(path); {
	case strings.EqualFold(ext, ".txt"):
		return loadSCANText(path)
	case !strings.EqualFold(ext, ".tsv"):
		return data.ReadRecords(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var recs []data.Record
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		src, tgt, ok := strings.Cut(line, "\t")
		if !ok || strings.Contains(tgt, "\t") {
			return nil, fmt.Errorf("%s: line %d: want source<TAB>target", path, n)
		}
		recs = append(recs, data.Record{ID: fmt.Sprintf("line-%d", n), Input: src, Output: tgt})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: a line is too long", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records (empty file)", path)
	}
	return recs, nil
}

func loadSCANText(path string) ([]data.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []data.Record
	err = scan.ReadText(f, func(rec *data.Record) error {
		recs = append(recs, *rec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
