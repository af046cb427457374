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

// PolynomialDecay is AllenNLP's polynomial_decay schedule at its defaults
// (power 1, end rate 0), which Bogin et al. fine-tune with: linear warmup
// over warmup steps, then lr * (1 - (step-warmup)/(total-warmup)),
// reaching 0 at step total.
func PolynomialDecay(lr float64, warmup, total, step int) float64 {
	if step <= warmup {
		return lr * float64(step) / float64(max(warmup, 1))
	}
	if step >= total {
		return 0
	}
	return lr * (1 - float64(step-warmup)/float64(total-warmup))
}
