package train

import "time"

// The lines of metrics.jsonl. Their fields are in alphabetical order, the
// order the lines had when they were written from maps, so files stay
// byte-comparable across versions. Every line but the resume marker ends
// with Wall, the only part that differs between two runs of one seed
// (with tokens_per_s): tools that compare runs drop both.

// TrainLine is written every LogEvery steps and at the last step.
type TrainLine struct {
	// Gemm is the GPU's product kernel of the step ("cublas", "tf32" or
	// "fp32"; engine.GemmName), absent on the CPU. Per line, since a run
	// may be resumed on another device.
	Gemm string `json:"gemm,omitempty"`
	// GradNorm is the gradient's global L2 norm before clipping, at Step.
	GradNorm float64 `json:"grad_norm"`
	// Loss is the mean training loss over the steps since the last line.
	Loss float64 `json:"loss"`
	// LR is the learning rate of Step.
	LR float64 `json:"lr"`
	// Step is the optimizer step the line closes.
	Step int `json:"step"`
	// TokensPerS is target tokens per second of wall time since the last line.
	TokensPerS float64 `json:"tokens_per_s"`
	// Wall is when the line was written.
	Wall Wall `json:"wall"`
}

// DevLine is written after each dev evaluation.
type DevLine struct {
	// DevEM is the exact match on the dev records evaluated (eval_limit).
	DevEM float64 `json:"dev_em"`
	// DevLoss is the mean per-token loss on them.
	DevLoss float64 `json:"dev_loss"`
	// Step is the step evaluated.
	Step int `json:"step"`
	// Wall is when the line was written.
	Wall Wall `json:"wall"`
}

// Wall is the clock of a metrics line.
type Wall struct {
	// ElapsedS is wall-clock seconds since this invocation (start or
	// resume) began, to three decimals.
	ElapsedS float64 `json:"elapsed_s"`
	// Time is the UTC time the line was written, RFC 3339.
	Time string `json:"time"`
}

// wallSince is the Wall of a line written now by an invocation that began
// at start.
func wallSince(start time.Time) Wall {
	now := time.Now()
	return Wall{ElapsedS: float64(now.Sub(start).Milliseconds()) / 1000, Time: now.UTC().Format(time.RFC3339)}
}
