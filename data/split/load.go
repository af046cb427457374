package split

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"compgen/data"
)

// LoadPool reads the records to split: JSONL, or with a .tsv extension plain
// "source<TAB>target" lines whose records get ids line-N (N counts from 1).
func LoadPool(path string) ([]data.Record, error) {
	if !strings.EqualFold(filepath.Ext(path), ".tsv") {
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
