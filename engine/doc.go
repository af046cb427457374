// Package engine runs Gorgonia graphs without Gorgonia's VM: Compile turns
// the nodes a set of roots depends on (a training graph after G.Grad holds
// forward and backward nodes) into a linear Program of kernel calls over
// planned buffers, and a Machine runs that program on a Backend. The CPU
// backend calls the pure-Go kernel references of package kernels; the CUDA
// backend (build tag gpu) calls the same kernels on the GPU, so parameters,
// activations, gradients and optimizer state stay in device memory and only
// batches go in and losses and logits come out (issue 8, "Design").
//
// Memory: parameters, inputs, requested outputs (loss, gradients, logits)
// and optimizer state are persistent buffers; every other activation lives
// in one arena, placed by liveness so buffers whose live ranges do not
// overlap share memory (plan.go).
package engine
