package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"compbench/data"
	"compbench/data/structure"
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
	f, err := data.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	err = data.EachLine(f, func(line int, p []byte) error {
		var e struct {
			ID       json.RawMessage `json:"id"`
			Easiness *float64        `json:"easiness"`
		}
		if err := json.Unmarshal(p, &e); err != nil {
			return err
		}
		id, err := parseID(e.ID)
		if err != nil {
			return err
		}
		if e.Easiness == nil || math.IsNaN(*e.Easiness) {
			return errors.New(`no numeric "easiness"`)
		}
		if _, dup := out[id]; dup {
			return fmt.Errorf("id %q repeats", id)
		}
		out[id] = *e.Easiness
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no easiness lines (empty file)", path)
	}
	return out, nil
}
