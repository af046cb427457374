package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"compgen/data/structure"
)

// EasinessLine is one line of an easiness file.
type EasinessLine struct {
	// ID is the test record's id.
	ID string `json:"id"`
	// Easiness is the predicted easiness ê.
	Easiness float64 `json:"easiness"`
	// Unobserved lists the unobserved structures, hardest first.
	Unobserved []structure.Unobserved `json:"unobserved"`
}

// WriteEasiness writes one JSON line per entry.
func WriteEasiness(w io.Writer, lines []EasinessLine) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range lines {
		if lines[i].Unobserved == nil {
			lines[i].Unobserved = []structure.Unobserved{}
		}
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return nil
}

// ReadEasiness reads an easiness file into id -> ê.
func ReadEasiness(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), maxPredLine)
	out := map[string]float64{}
	line := 0
	for sc.Scan() {
		line++
		p := bytes.TrimSpace(sc.Bytes())
		if len(p) == 0 {
			continue
		}
		var e struct {
			ID       json.RawMessage `json:"id"`
			Easiness *float64        `json:"easiness"`
		}
		if err := json.Unmarshal(p, &e); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		id, err := parseID(e.ID)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if e.Easiness == nil || math.IsNaN(*e.Easiness) {
			return nil, fmt.Errorf("%s: line %d: no numeric \"easiness\"", path, line)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s: line %d: id %q repeats", path, line, id)
		}
		out[id] = *e.Easiness
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no easiness lines (empty file)", path)
	}
	return out, nil
}
