package eval

import (
	"fmt"
	"strings"

	"compbench/data"
)

// Pair is a gold record and its prediction.
type Pair struct {
	// Gold is the gold record.
	Gold *data.Record
	// Pred is the prediction; nil when the id had none (--allow-missing).
	Pred *Prediction
}

// Joined is a predictions file matched to the gold records by id, in gold order.
type Joined struct {
	// Pairs holds one entry per gold record.
	Pairs []Pair
	// MissingPred lists gold ids without a prediction.
	MissingPred []string
	// Unknown lists prediction ids that are not gold ids.
	Unknown []string
}

// Join matches preds to gold by id. Ids missing on either side are an error
// unless allowMissing; then a gold record without a prediction counts as
// wrong and an unknown prediction is ignored (both are listed).
func Join(gold []data.Record, preds []Prediction, allowMissing bool) (*Joined, error) {
	byID := make(map[string]*Prediction, len(preds))
	for i := range preds {
		byID[preds[i].ID] = &preds[i]
	}
	j := &Joined{Pairs: make([]Pair, len(gold))}
	goldIDs := make(map[string]bool, len(gold))
	for i := range gold {
		g := &gold[i]
		goldIDs[g.ID] = true
		p := byID[g.ID]
		if p == nil {
			j.MissingPred = append(j.MissingPred, g.ID)
		}
		j.Pairs[i] = Pair{Gold: g, Pred: p}
	}
	for i := range preds {
		if !goldIDs[preds[i].ID] {
			j.Unknown = append(j.Unknown, preds[i].ID)
		}
	}
	if !allowMissing {
		var msgs []string
		if len(j.MissingPred) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d gold ids have no prediction (%s)", len(j.MissingPred), sample(j.MissingPred)))
		}
		if len(j.Unknown) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d predictions have ids not in the gold file (%s)", len(j.Unknown), sample(j.Unknown)))
		}
		if len(msgs) > 0 {
			return nil, fmt.Errorf("%s; pass --allow-missing to score anyway", strings.Join(msgs, "; "))
		}
	}
	return j, nil
}

// sample shows the first few ids of a list.
func sample(ids []string) string {
	const k = 3
	if len(ids) <= k {
		return strings.Join(quoteAll(ids), ", ")
	}
	return strings.Join(quoteAll(ids[:k]), ", ") + ", ..."
}

func quoteAll(ids []string) []string {
	out := make([]string, len(ids))
	for i, s := range ids {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
