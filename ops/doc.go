// Package ops holds compbench's custom Gorgonia operations: the pieces of a
// Transformer that gorgonia v0.9.18 lacks or computes in several passes over
// memory (LayerNorm, tanh-GELU, softmax cross-entropy with integer targets and
// label smoothing, masked attention softmax with additive biases, strided
// per-head attention products, relative-position bias lookup, seeded dropout,
// row gather), plus the optimizer arithmetic (global-norm clipping and a fused
// Adam step) as plain functions over tensors.
//
// Every op works on float32 and has a finite-difference gradient test. The
// arithmetic itself lives in package kernels: forward and backward run the
// kernels' CPU references (XxxRef) on the tensors' row-major slices, split
// over CPUs by rows or by fixed chunks whose order the references define, so
// the ops, the engine's CPU backend and the GPU kernels' parity tests share
// one implementation. Only the matrix products stay on BLAS (Linear, and the
// per-head attention products, which take their geometry from
// kernels.AttnGemm): BLAS blocks its sums, so kernels.GemmRef agrees with
// it within a tolerance, not bit for bit.
//
// The Transformer pieces follow Vaswani et al. (2017) as used by Keysers et
// al. (2020, App. E) and Shi et al. (2022, §4 and App. C); GELU and
// LayerNorm-before-attention are what GPT-2 (Radford et al. 2019) needs.
package ops
