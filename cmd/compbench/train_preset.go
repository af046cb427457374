package main

import (
	"fmt"
	"sort"
	"strings"

	"compbench/models"
	"compbench/train"
)

// A preset is a named starting config, applied before --config and flags.
// Measured results are in docs/train.md.
type preset struct {
	name, about string
	config      func(model string) train.Config
}

var presets = []preset{
	{"paper", "the papers' size and schedule (Shi et al.; Keysers et al. for the LSTM models), the defaults: for a GPU", defaultConfig},
	{"cpu-small", "a small model that learns SCAN's random split in minutes on 2 CPU cores (Transformer: 2 layers, dim 64, MLP 128, batch 64, lr 2e-3, warmup 200, 2000 steps; LSTM: 1 layer, dim 64, batch 64, lr 0.01, constant, 2500 steps; dropout 0, dev evaluation every 500 steps)", cpuSmall},
}

// cpuSmall is the cpu-small preset: settings measured to reach about 90%
// dev exact match on SCAN's random split in minutes on 2 cores
// (docs/train.md). The LSTM's constant rate of 0.01 learns fastest there.
func cpuSmall(model string) train.Config {
	c := defaultConfig(model)
	c.Model.Dropout, c.Batch, c.EvalEvery = 0, 64, 500
	if models.IsLSTM(model) {
		c.Model.Layers, c.Model.Dim = 1, 64
		c.Steps, c.LR, c.Warmup = 2500, 0.01, 0
		return c
	}
	c.Model.Layers, c.Model.Dim, c.Model.MLPDim, c.Model.Heads = 2, 64, 128, 4
	c.Steps, c.LR, c.Warmup = 2000, 2e-3, 200
	return c
}

func presetNames() string {
	var n []string
	for _, p := range presets {
		n = append(n, p.name)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// presetConfig is the config of preset name for model.
func presetConfig(name, model string) (train.Config, error) {
	for _, p := range presets {
		if p.name == name {
			c := p.config(model)
			c.Preset = name
			return c, nil
		}
	}
	return train.Config{}, usagef("unknown preset %q (known: %s)", name, presetNames())
}

// presetHelp lists the presets for train's help.
func presetHelp() string {
	var b strings.Builder
	for _, p := range presets {
		fmt.Fprintf(&b, "\n  %-10s %s", p.name, p.about)
	}
	return b.String()
}
