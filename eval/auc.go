package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ROCPoint is one corner of the ROC curve: the rates reached when every
// example with score >= Threshold is called positive.
type ROCPoint struct {
	// Threshold is the score cut.
	Threshold float64 `json:"threshold"`
	// FPR is the false positive rate.
	FPR float64 `json:"fpr"`
	// TPR is the true positive rate.
	TPR float64 `json:"tpr"`
}

// AUC is the area under the ROC curve of scores against binary labels
// (true = positive). Tied scores move the curve diagonally, so the area is
// the trapezoid rule's, equal to P(s+ > s-) + P(s+ = s-)/2. It needs at
// least one positive and one negative, and no NaN score.
func AUC(scores []float64, labels []bool) (float64, []ROCPoint, error) {
	if len(scores) != len(labels) {
		return 0, nil, fmt.Errorf("%d scores but %d labels", len(scores), len(labels))
	}
	var pos, neg float64
	idx := make([]int32, len(scores))
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, nil, fmt.Errorf("score %d is NaN", i)
		}
		idx[i] = int32(i)
		if labels[i] {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return 0, nil, errors.New("AUC needs both positive and negative examples")
	}
	slices.SortFunc(idx, func(a, b int32) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	roc := []ROCPoint{{Threshold: math.Inf(1)}}
	var tp, fp, area float64
	for i := 0; i < len(idx); {
		s := scores[idx[i]]
		ptp, pfp := tp, fp
		for ; i < len(idx) && scores[idx[i]] == s; i++ {
			if labels[idx[i]] {
				tp++
			} else {
				fp++
			}
		}
		area += (fp - pfp) * (tp + ptp) / 2
		roc = append(roc, ROCPoint{Threshold: s, FPR: fp / neg, TPR: tp / pos})
	}
	return area / (pos * neg), roc, nil
}
