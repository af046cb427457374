package main

import (
	"fmt"
	"slices"
	"strings"

	"compbench/data"
	"compbench/engine"
	"compbench/train"
)

// machineMemory is the machine's total memory in bytes and where the
// number comes from. A variable, so that tests can pretend a smaller one.
var machineMemory = engine.MachineMemory

// memPart is one share of a command's working set and the settings that
// size it, named as the user gives them.
type memPart struct {
	what     string
	settings string
	bytes    float64
}

// memParts names the config keys of each share by the flags that set
// them, "--dim (dim)", when every key has one; a sweep file's shares,
// whose keys are not all flags, keep the keys.
func memParts(parts ...train.MemPart) []memPart {
	out := make([]memPart, len(parts))
	for i, p := range parts {
		names := make([]string, len(p.Keys))
		for j, k := range p.Keys {
			for f, key := range configFlags {
				if key == k {
					names[j] = fmt.Sprintf("--%s (%s)", f, k[strings.LastIndexByte(k, '.')+1:])
				}
			}
		}
		if slices.Contains(names, "") {
			names = p.Keys
		}
		s := names[len(names)-1]
		if n := len(names); n > 1 {
			s = strings.Join(names[:n-1], ", ") + " or " + s
		}
		out[i] = memPart{p.What, s, p.Bytes}
	}
	return out
}

// memDevice is the device of the running command, set by parseDevice
// (every command reads its --device before it checks memory): on a GPU,
// checkMemory holds the working set to the GPU's free memory too.
var memDevice engine.Device

// deviceMemory is GPU d's free and total memory in bytes (cuMemGetInfo).
// A variable, so that tests can pretend a smaller card.
var deviceMemory = func(d engine.Device) (free, total float64, err error) {
	f, t, err := engine.DeviceMemory(d)
	return float64(f), float64(t), err
}

// checkMemory refuses, as a usage error, a working set larger than the
// machine's memory or, on a GPU, than the GPU's free memory, naming the
// largest share and what sets it. Go's allocator would otherwise end the
// process with a fatal "out of memory" and a goroutine dump, and the GPU
// would fail an allocation, either possibly after minutes of work; the
// GPU is asked before the command allocates anything there.
func checkMemory(cmd string, parts ...memPart) error {
	total, largest := 0.0, parts[0]
	for _, p := range parts {
		total += p.bytes
		if p.bytes > largest.bytes {
			largest = p
		}
	}
	have, source := machineMemory()
	if total > have {
		return usagef("%s: needs about %s of memory, mostly %s (%s), but the machine has %s (%s); lower %s",
			cmd, fmtBytes(total), largest.what, fmtBytes(largest.bytes), fmtBytes(have), source, largest.settings)
	}
	if !memDevice.CUDA {
		return nil
	}
	free, all, err := deviceMemory(memDevice)
	if err != nil {
		return fmt.Errorf("%s: GPU memory: %w", cmd, err)
	}
	if total > free {
		return usagef("%s: needs about %s of GPU memory, mostly %s (%s), but %s has %s free of %s (cuMemGetInfo); lower %s",
			cmd, fmtBytes(total), largest.what, fmtBytes(largest.bytes), memDevice, fmtBytes(free), fmtBytes(all), largest.settings)
	}
	return nil
}

// fmtBytes writes a size with a binary unit.
func fmtBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1e4 {
		return fmt.Sprintf("%.3g %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// checkTrainData refuses training records without an input or an output,
// and a run whose working set would not fit in memory.
func checkTrainData(cfg train.Config, trainPath string, recs []data.Record, devPath string, dev []data.Record) error {
	if err := data.RequireText(recs, true); err != nil {
		return fmt.Errorf("%s: %w", trainPath, err)
	}
	if err := data.RequireText(dev, true); err != nil {
		return fmt.Errorf("%s: %w", devPath, err)
	}
	if parts := train.TrainMemory(cfg, recs, dev); parts != nil {
		return checkMemory("train", memParts(parts...)...)
	}
	return nil
}
