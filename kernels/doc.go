// Package kernels holds compbench's CUDA kernels (kernels/*.cu, compiled to
// the PTX committed under kernels/ptx) and, beside each kernel, a pure-Go CPU
// reference named XxxRef. The references are the one implementation of that
// arithmetic on the CPU: the Gorgonia ops of package ops call them for their
// forward and backward passes, and where a reference stands for a Gorgonia
// built-in it computes the same bits, unless its doc comment states a
// tolerance.
//
// The references are the contract of the GPU executor (package engine): its
// CPU backend calls them, and its CUDA backend calls the Device launchers of
// the same name without "Ref" (build tag gpu), which the parity tests
// compare with the references.
//
// Conventions: tensors are row-major float32 slices; integer inputs (ids,
// targets, buckets) are int32. Every Ref writes only its output slices and
// panics (a programmer error) when a slice is shorter than its shape says.
// The references are sequential: they define the arithmetic order, which is
// the order the ops use, and the GPU kernels follow it where the parity
// tests ask for bit identity.
package kernels
