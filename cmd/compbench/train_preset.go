package main

import (
	"fmt"
	"strings"

	"compbench/models"
	"compbench/train"
)

// presetHelp lists the presets for train's help, with the settings of
// each, so the help cannot drift from them.
func presetHelp() string {
	var b strings.Builder
	for _, p := range train.Presets {
		fmt.Fprintf(&b, "\n  %s: %s", p.Name, p.About)
		for _, m := range []string{"transformer", "lstm-attention"} {
			c := p.Config(m)
			kind := "Transformer"
			if models.IsLSTM(m) {
				kind = "LSTM"
			}
			fmt.Fprintf(&b, "\n    %-12s layers %d, dim %d, ", kind+":", c.Model.Layers, c.Model.Dim)
			if !models.IsLSTM(m) {
				fmt.Fprintf(&b, "heads %d, MLP %d, ", c.Model.Heads, c.Model.MLPDim)
			}
			sched := c.Schedule
			if sched == "" {
				sched = train.ScheduleRsqrt
			}
			fmt.Fprintf(&b, "dropout %g,\n    %12s batch %d, lr %g (%s), warmup %d, %d steps, dev every %d",
				c.Model.Dropout, "", c.Batch, c.LR, sched, c.Warmup, c.Steps, c.EvalEvery)
		}
	}
	return b.String()
}
