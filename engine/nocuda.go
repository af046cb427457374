//go:build !gpu && !gpuemu

package engine

import "fmt"

// CUDABuilt says whether this binary has the CUDA backend (build tag gpu).
const CUDABuilt = false

func openCUDA(ordinal int) (Backend, error) {
	return nil, fmt.Errorf("cuda:%d: this compbench binary was built without CUDA support; rebuild it with `go build -tags %s ./cmd/compbench`", ordinal, BuildTag)
}

// DeviceMemory reports that this binary has no GPU.
func DeviceMemory(d Device) (free, total int64, err error) {
	return 0, 0, fmt.Errorf("%s: this compbench binary was built without CUDA support", d)
}
