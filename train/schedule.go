package train

import "math"

// LearningRate is the schedule of Shi et al. (App. C):
// lr * min(1, step/warmup) * sqrt(warmup) / sqrt(max(step, warmup)),
// linear warmup then inverse square root decay; step counts from 1.
// Warmup 0 gives the constant lr used for fine-tuning.
func LearningRate(lr float64, warmup, step int) float64 {
	if warmup <= 0 {
		return lr
	}
	s, w := float64(step), float64(warmup)
	return lr * math.Min(1, s/w) * math.Sqrt(w) / math.Sqrt(math.Max(s, w))
}
