package main

import (
	"flag"
	"fmt"
	"io"

	"compbench/engine"
)

const deviceHelp = "where to run: cpu, or cuda or cuda:N (NVIDIA GPU N; needs a binary built with -tags gpu). " +
	"Every device runs the same executor; the GPU adds only its kernels"

// device is a parsed --device value.
type device struct {
	// name is the flag value.
	name string
	// dev is the CPU or the GPU to open.
	dev engine.Device
}

// deviceFlag registers --device on fs.
func deviceFlag(fs *flag.FlagSet) *string {
	return fs.String("device", "cpu", deviceHelp)
}

// parseDevice reads a --device value; a bad value or cuda in a binary
// built without GPU support is a usage error. The device becomes the one
// the command's memory checks hold the working set to (memDevice).
func parseDevice(s string) (device, error) {
	memDevice = engine.Device{}
	if s == "engine-cpu" {
		return device{}, usagef("--device engine-cpu is now --device cpu: every device runs the same executor")
	}
	d, err := engine.ParseDevice(s)
	if err != nil {
		return device{}, usagef("--device: %v", err)
	}
	memDevice = d
	return device{name: s, dev: d}, nil
}

// open returns the backend to run on and a function that releases it.
func (d device) open() (engine.Backend, func(), error) {
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
