package cfq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"compbench/data"
)

// Split is a published split: indexes into dataset.json (CFQ) or into the
// lines of SCAN's tasks.txt (SCAN MCD splits). Examples in no part are
// unused (CFQ's MCD splits use about half of the dataset).
type Split struct {
	// Train, Dev and Test are example indexes, in file order.
	Train, Dev, Test []int
}

// Part numbers returned by Split.Parts.
const (
	None int8 = iota
	Train
	Dev
	Test
)

// PartNames names the parts by their Part number (PartNames[Train] = "train").
var PartNames = [...]string{"", "train", "dev", "test"}

// splitJSON is the published file format.
type splitJSON struct {
	Train *[]int `json:"trainIdxs"`
	Dev   *[]int `json:"devIdxs"`
	Test  *[]int `json:"testIdxs"`
}

// ReadSplit reads a split file.
func ReadSplit(path string) (*Split, error) {
	b, err := data.ReadFileLimit(path, data.SplitFile)
	if err != nil {
		return nil, err
	}
	s, err := DecodeSplit(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// DecodeSplit parses {"trainIdxs": [...], "devIdxs": [...], "testIdxs":
// [...]}. trainIdxs and testIdxs are required, devIdxs may be absent; other
// keys are ignored. Indexes must be non-negative and in at most one part.
func DecodeSplit(b []byte) (*Split, error) {
	var raw splitJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a split file {\"trainIdxs\", \"devIdxs\", \"testIdxs\"}: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the split object")
	}
	if raw.Train == nil || raw.Test == nil {
		return nil, fmt.Errorf("split file needs both \"trainIdxs\" and \"testIdxs\"")
	}
	s := &Split{Train: *raw.Train, Test: *raw.Test}
	if raw.Dev != nil {
		s.Dev = *raw.Dev
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// check finds negative or repeated indexes without knowing the data size
// (a map, so a huge index in a hostile file costs nothing).
func (s *Split) check() error {
	seen := map[int]int8{}
	for p, l := range [][]int{s.Train, s.Dev, s.Test} {
		part := int8(p + 1)
		for _, i := range l {
			if i < 0 {
				return fmt.Errorf("%s index %d is negative", PartNames[part], i)
			}
			if prev, ok := seen[i]; ok {
				return fmt.Errorf("index %d is in %s and %s", i, PartNames[prev], PartNames[part])
			}
			seen[i] = part
		}
	}
	return nil
}

// Parts maps each of n example indexes to its part (None when unused); an
// index >= n is an error.
func (s *Split) Parts(n int) ([]int8, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	parts := make([]int8, n)
	for p, l := range [][]int{s.Train, s.Dev, s.Test} {
		for _, i := range l {
			if i >= n {
				return nil, fmt.Errorf("%s index %d is out of range: the data has %d examples", PartNames[p+1], i, n)
			}
			parts[i] = int8(p + 1)
		}
	}
	return parts, nil
}

// Route maps each index of a part to the part, for a reader that does not
// know the data's size yet; unlisted indexes map to None. Unlike Parts it
// allocates by the number of indexes, never by the largest.
func (s *Split) Route() map[int]int8 {
	m := make(map[int]int8, len(s.Train)+len(s.Dev)+len(s.Test))
	for p, l := range [][]int{s.Train, s.Dev, s.Test} {
		for _, i := range l {
			m[i] = int8(p + 1)
		}
	}
	return m
}

// Sizes returns the number of train, dev and test indexes.
func (s *Split) Sizes() (train, dev, test int) { return len(s.Train), len(s.Dev), len(s.Test) }

// Encode writes the split in the published format, one key per line.
func (s *Split) Encode(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString("{")
	for k, f := range []struct {
		key string
		idx []int
	}{{"trainIdxs", s.Train}, {"devIdxs", s.Dev}, {"testIdxs", s.Test}} {
		if k > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  %q: [", f.key)
		for j, i := range f.idx {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(i))
		}
		b.WriteString("]")
	}
	b.WriteString("\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}
