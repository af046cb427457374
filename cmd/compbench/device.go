package main

import (
	"flag"
	"fmt"
	"io"

	"compbench/engine"
)

// engineCPU names the GPU executor's code path run on the CPU backend
// (BLAS products): the same compiled programs, buffers and optimizer as
// --device cuda, checkable on a machine without a GPU.
const engineCPU = "engine-cpu"

const deviceHelp = "where to run: cpu (Gorgonia on the CPU), cuda or cuda:N (NVIDIA GPU N; needs a binary built with -tags gpu), or " +
	engineCPU + " (the GPU code path on the CPU, for checking it)"

// device is a parsed --device value.
type device struct {
	// name is the flag value.
	name string
	// dev is the CPU or the GPU to open.
	dev engine.Device
	// engine selects package engine's executor; false is the TapeMachine.
	engine bool
}

// deviceFlag registers --device on fs.
func deviceFlag(fs *flag.FlagSet) *string {
	return fs.String("device", "cpu", deviceHelp)
}

// parseDevice reads a --device value; a bad value or cuda in a binary
// built without GPU support is a usage error.
func parseDevice(s string) (device, error) {
	if s == engineCPU {
		return device{name: s, engine: true}, nil
	}
	d, err := engine.ParseDevice(s)
	if err != nil {
		return device{}, usagef("--device: %v", err)
	}
	return device{name: s, dev: d, engine: d.CUDA}, nil
}

// open returns the backend to run on (nil for the TapeMachine) and a
// function that releases it.
func (d device) open() (engine.Backend, func(), error) {
	if !d.engine {
		return nil, func() {}, nil
	}
	if !d.dev.CUDA {
		return &engine.CPU{BLAS: true}, func() {}, nil
	}
	be, err := engine.Open(d.dev)
	if err != nil {
		return nil, nil, fmt.Errorf("--device %s: %w", d.name, err)
	}
	release := func() {}
	if c, ok := be.(io.Closer); ok {
		release = func() { c.Close() }
	}
	return be, release, nil
}
