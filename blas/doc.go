// Package blas selects the BLAS library behind Gorgonia's matrix products.
//
// By default (cgo on) Use installs OpenBLAS through gonum's netlib binding,
// about four times faster than the pure-Go gonum BLAS on a Transformer step.
// It links -lopenblas, which Debian's libopenblas-dev provides (`make deps`
// installs it). Building with `-tags purego`, or with CGO_ENABLED=0, keeps
// gonum's pure-Go BLAS and needs no C library.
package blas
