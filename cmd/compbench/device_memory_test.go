package main

import (
	"errors"
	"strings"
	"testing"

	"compbench/engine"
)

// TestCheckMemoryGPU: on a GPU the working set is held to the card's free
// memory as well as to the machine's, with a usage error naming the flag
// to lower; on the CPU the card is never asked. The free memory is faked,
// so the decision is tested in every build.
func TestCheckMemoryGPU(t *testing.T) {
	oldHost, oldDev, oldMem := machineMemory, memDevice, deviceMemory
	defer func() { machineMemory, memDevice, deviceMemory = oldHost, oldDev, oldMem }()
	machineMemory = func() (float64, string) { return 64 << 30, "test" }
	weights := memPart{"the weights, gradients and Adam moments", "--dim (dim)", 6 << 30}
	acts := memPart{"a training step's activations", "--batch (batch)", 1 << 30}
	for _, c := range []struct {
		name    string
		dev     engine.Device
		free    float64
		err     error
		parts   []memPart
		want    string // in the error; "" for none
		usage   bool
		queried bool
	}{
		{"fits the card", engine.Device{CUDA: true}, 8 << 30, nil, []memPart{weights, acts}, "", false, true},
		{"over the card's free memory", engine.Device{CUDA: true, Ordinal: 1}, 4 << 30, nil, []memPart{weights, acts},
			"train: needs about 7.0 GiB of GPU memory, mostly the weights, gradients and Adam moments (6.0 GiB), but cuda:1 has 4.0 GiB free of 80.0 GiB (cuMemGetInfo); lower --dim (dim)", true, true},
		{"largest share names the flag", engine.Device{CUDA: true}, 4 << 30, nil, []memPart{acts, {"decoding", "--beam", 5 << 30}},
			"mostly decoding (5.0 GiB)", true, true},
		{"over the machine's memory first", engine.Device{CUDA: true}, 1 << 40, nil, []memPart{{"the weights", "--dim", 100 << 30}},
			"but the machine has 64.0 GiB (test)", true, false},
		{"card cannot be asked", engine.Device{CUDA: true}, 0, errors.New("cuda: device 0 requested, 0 present"), []memPart{acts},
			"train: GPU memory: cuda: device 0 requested, 0 present", false, true},
		{"cpu never asks the card", engine.Device{}, 0, errors.New("asked"), []memPart{weights, acts}, "", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			queried := false
			memDevice = c.dev
			deviceMemory = func(d engine.Device) (float64, float64, error) {
				queried = true
				if d != c.dev {
					t.Errorf("asked %v, want %v", d, c.dev)
				}
				return c.free, 80 << 30, c.err
			}
			err := checkMemory("train", c.parts...)
			if queried != c.queried {
				t.Errorf("card asked: %v, want %v", queried, c.queried)
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			var ue *usageError
			if errors.As(err, &ue) != c.usage {
				t.Errorf("usage error: %v, want %v", !c.usage, c.usage)
			}
		})
	}
}

// TestParseDeviceSetsMemDevice: the memory checks follow the command's
// --device, and a refused value leaves the CPU.
func TestParseDeviceSetsMemDevice(t *testing.T) {
	defer func(d engine.Device) { memDevice = d }(memDevice)
	memDevice = engine.Device{CUDA: true}
	if _, err := parseDevice("cpu"); err != nil || memDevice.CUDA {
		t.Errorf("after --device cpu: %v, %v", memDevice, err)
	}
	memDevice = engine.Device{CUDA: true}
	if _, err := parseDevice("gpu"); err == nil || memDevice.CUDA {
		t.Errorf("after --device gpu: %v, %v", memDevice, err)
	}
}
