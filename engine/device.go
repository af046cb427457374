package engine

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"compbench/kernels"
)

// BuildTag is the build tag of the CUDA backend. It is not "cuda": that
// tag also switches gorgonia.org/gorgonia to its own CUDA build, which needs
// cuDNN headers Debian does not ship.
const BuildTag = "gpu"

// Device is what --device names: the CPU, or CUDA GPU Ordinal.
type Device struct {
	// CUDA selects a GPU; false is the CPU.
	CUDA bool
	// Ordinal is the GPU's number (0 for the first).
	Ordinal int
}

func (d Device) String() string {
	if !d.CUDA {
		return "cpu"
	}
	return fmt.Sprintf("cuda:%d", d.Ordinal)
}

// ParseDevice reads "cpu", "cuda" (GPU 0) or "cuda:N". A binary built
// without the gpu build tag refuses "cuda" with a message saying how to build one
// that accepts it.
func ParseDevice(s string) (Device, error) {
	switch {
	case s == "cpu" || s == "":
		return Device{}, nil
	case s == "cuda" || strings.HasPrefix(s, "cuda:"):
		d := Device{CUDA: true}
		if rest, ok := strings.CutPrefix(s, "cuda:"); ok {
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 {
				return Device{}, fmt.Errorf("device %q: want cuda:N with N a GPU number >= 0", s)
			}
			d.Ordinal = n
		}
		if !CUDABuilt {
			return Device{}, fmt.Errorf("device %q: this compbench binary was built without CUDA support; "+
				"rebuild it with `go build -tags %s ./cmd/compbench` (needs the CUDA toolkit: `make cuda-toolkit`)", s, BuildTag)
		}
		return d, nil
	}
	return Device{}, fmt.Errorf("device %q: want cpu, cuda or cuda:N", s)
}

// Open returns the backend of d: the CPU backend with BLAS products for the
// CPU, the GPU for cuda:N (an error when no usable GPU or driver is found).
// Close the backend when done when it implements io.Closer.
func Open(d Device) (Backend, error) {
	if !d.CUDA {
		return &CPU{BLAS: true}, nil
	}
	return openCUDA(d.Ordinal)
}

// gemmChooser is a backend with a choice of product kernel (CUDA).
type gemmChooser interface{ GemmChoice() kernels.GemmChoice }

// Describe is be's name and, on a GPU, its product kernel and why that one
// ("cuda:0 NVIDIA H100 (sm_90), GEMM cuBLAS libcublas.so.12 12.4.5
// (auto)"): what a command prints once at start and a run's
// provenance.jsonl records.
func Describe(be Backend) string {
	if g, ok := be.(gemmChooser); ok {
		return fmt.Sprintf("%s, GEMM %s", be.Name(), g.GemmChoice())
	}
	return be.Name()
}

// GemmName is the product kernel of be for run records ("cublas", "tf32"
// or "fp32"; kernels.ChooseGemm), or "" for a backend without that choice
// (the CPU's products are BLAS).
func GemmName(be Backend) string {
	if g, ok := be.(gemmChooser); ok {
		return g.GemmChoice().Mode.String()
	}
	return ""
}

// fallbackMemory is the memory assumed where /proc/meminfo cannot be read.
const fallbackMemory = 64 << 30

// MachineMemory is the machine's total memory in bytes and where the
// number comes from, for the memory checks of CPU runs.
func MachineMemory() (float64, string) {
	if b, ok := memTotal("/proc/meminfo"); ok {
		return b, "MemTotal in /proc/meminfo"
	}
	return fallbackMemory, "assumed where /proc/meminfo cannot be read"
}

// memTotal reads MemTotal (kB) from a meminfo file.
func memTotal(path string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		return kb * 1024, err == nil && kb > 0
	}
	return 0, false
}
