// Package cudaguard ends a GPU test binary cleanly on a machine without a
// usable NVIDIA GPU.
//
// In a test binary of the gpu build (package kernels imports this one) it
// initialises the driver (package cudrv) before any test runs and, when
// that fails, says the CUDA tests are skipped and exits 0, so `go test
// -tags gpu` ends cleanly without a GPU; COMPBENCH_REQUIRE_GPU=1 makes
// that a failure (exit 1) instead. The compbench binary itself never
// touches the driver at start-up: it runs on a CPU-only machine, and
// --device cuda there fails with one line naming the cause.
//
// In the default build the package is empty.
package cudaguard
