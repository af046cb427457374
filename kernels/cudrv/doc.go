// Package cudrv is the part of the CUDA driver API that package kernels
// uses, loaded with dlopen on first use (build tag gpu).
//
// Nothing here runs at start-up, and the binary does not link
// libcuda.so.1: a GPU binary starts, and runs every command with
// --device cpu, on a machine without an NVIDIA driver. Init opens the
// driver when a command asks for a GPU and says what is missing when it
// cannot. No CUDA header is used, so the gpu build needs no CUDA toolkit
// either: the prototypes and constants in driver_cuda.go are the driver's
// stable C ABI (cuda.h; the _v2 entry points are the ones cuda.h has
// mapped the plain names to since CUDA 3.2 and 4.0).
//
// In the default build the package is empty.
package cudrv
