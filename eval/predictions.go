package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"compbench/data"
)

// Prediction is one line of a predictions file:
// {"id": ..., "prediction": "..."[, "score": x][, "beam": [...]]}.
type Prediction struct {
	// ID joins the prediction to a gold record.
	ID string
	// Text is the predicted output.
	Text string
	// Score is the model's score of Text, when given.
	Score *float64
	// Beam holds the other beam hypotheses, best first, when given.
	Beam []string
}

type predictionJSON struct {
	ID         json.RawMessage `json:"id"`
	Prediction *string         `json:"prediction"`
	Score      *float64        `json:"score"`
	Beam       []string        `json:"beam"`
}

// ReadPredictions reads a predictions JSONL file; see DecodePredictions.
func ReadPredictions(path string) ([]Prediction, error) {
	f, err := data.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := DecodePredictions(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no predictions (empty file)", path)
	}
	return ps, nil
}

// DecodePredictions reads predictions from r, one JSON object per line,
// blank lines skipped. An id may be a JSON string or integer (written as
// its decimal text). It fails, naming the line, on malformed JSON, a
// missing id or prediction, or a repeated id.
func DecodePredictions(r io.Reader) ([]Prediction, error) {
	var out []Prediction
	seen := map[string]int{}
	err := data.EachLine(r, func(line int, p []byte) error {
		var pj predictionJSON
		if err := json.Unmarshal(p, &pj); err != nil {
			return fmt.Errorf("not a prediction object: %w", err)
		}
		id, err := parseID(pj.ID)
		if err != nil {
			return err
		}
		if pj.Prediction == nil {
			return fmt.Errorf("id %q has no \"prediction\"", id)
		}
		if prev, ok := seen[id]; ok {
			return fmt.Errorf("id %q repeats (first on line %d)", id, prev)
		}
		seen[id] = line
		out = append(out, Prediction{ID: id, Text: *pj.Prediction, Score: pj.Score, Beam: pj.Beam})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func parseID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`missing "id"`)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("id: %w", err)
		}
		if s == "" {
			return "", errors.New(`empty "id"`)
		}
		return s, nil
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
		return "", fmt.Errorf("id %s: want a string or an integer", raw)
	}
	return string(raw), nil
}
