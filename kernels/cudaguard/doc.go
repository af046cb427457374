// Package cudaguard makes a cuda-built compbench fail clearly on a machine
// without a usable NVIDIA GPU.
//
// gorgonia.org/cu initialises the CUDA driver in its package init and, when
// that fails, prints a generic message and calls os.Exit(1). Go initialises
// packages that are ready in the order of their import paths, and this
// package depends on nothing outside the standard library, so
// "compbench/kernels/cudaguard" runs before "gorgonia.org/cu" in any binary
// that imports both (package kernels imports it for that reason). In the
// cuda build it calls cuInit itself and, on failure, prints one line naming
// the cause and exits 1. In a test binary it exits 0 after saying the CUDA
// tests are skipped, so `go test -tags cuda` ends cleanly on a machine
// without a GPU; set COMPBENCH_REQUIRE_GPU=1 to make that a failure instead.
//
// In the default build the package is empty.
package cudaguard
