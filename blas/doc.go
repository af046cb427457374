// Package blas selects the BLAS library behind Gorgonia's matrix products.
//
// By default (cgo on) Use installs OpenBLAS through gonum's netlib binding,
// about four times faster than the pure-Go gonum BLAS on a Transformer step.
// It links -lopenblas, which Debian's libopenblas-dev provides (`make deps`
// installs it). Building with `-tags purego`, or with CGO_ENABLED=0, keeps
// gonum's pure-Go BLAS and needs no C library.
//
// Use also shortens how long OpenBLAS's idle worker threads spin waiting for
// the next product (2^16 cycles instead of OpenBLAS's 2^28, about 0.1 s),
// unless OPENBLAS_THREAD_TIMEOUT is set: between products the Go ops run on
// the same cores, and spinning workers slowed them (BENCHMARKS.md).
package blas
