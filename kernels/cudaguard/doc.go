// Package cudaguard opens the CUDA driver for the gpu build, so that one
// binary serves mixed nodes: it runs --device cpu where there is no GPU or
// no driver at all, and says clearly why --device cuda cannot run there.
//
// gorgonia.org/cu links the driver API and initialises it in its package
// init, exiting the process with a generic message when that fails. In the
// gpu build this package defines the driver functions the binary calls
// (shim_cuda.c, from the generated symbols_cuda.h) as jumps through a table
// that its init fills from libcuda.so.1 with dlopen, so the binary does not
// depend on libcuda.so.1 at load time. Go initialises packages that are
// ready in the order of their import paths, and this package depends on
// nothing outside the standard library, so "compbench/kernels/cudaguard"
// runs before "gorgonia.org/cu" in any binary that imports both (package
// kernels imports it for that reason). When the driver is missing or
// cuInit fails, Err records why, gorgonia.org/cu's own cuInit call is
// answered with success so the program can start, and kernels.Open refuses
// with Err. In a test binary it exits 0 after saying the CUDA tests are
// skipped, so `go test -tags gpu` ends cleanly on a machine without a GPU;
// set COMPBENCH_REQUIRE_GPU=1 to make that a failure instead.
//
// scripts/gen_cudashim.sh regenerates symbols_cuda.h when gorgonia.org/cu
// changes; CI checks that it is current and that the binary does not link
// libcuda.so.1.
//
// In the default build the package is empty.
package cudaguard
