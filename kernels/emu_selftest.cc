//go:build gpuemu && !gpu

// Kernels that exercise the emulator itself (emu_test.go): a correct block
// reduction, and the misuse it must report.
#include "emu_cuda.h"

#include "common.cuh"
#include "emu_launch.h"

// emu_test_block_sum: out[blockIdx.x] = Σ over the block of (threadIdx.x + 1).
extern "C" __global__ void emu_test_block_sum(float* out) {
  __shared__ float sh[32];
  float s = block_sum((float)(threadIdx.x + 1), sh);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// emu_test_early_exit: lanes leave before a full-mask shuffle.
extern "C" __global__ void emu_test_early_exit(float* out) {
  if (threadIdx.x % 32 == 5) return;
  float s = warp_sum(1.0f);
  if (threadIdx.x == 0) out[0] = s;
}

// emu_test_divergent: two halves of the block wait at different barriers.
extern "C" __global__ void emu_test_divergent(float* out) {
  if (threadIdx.x < 64) {
    __syncthreads();
    out[0] = 1;
  } else {
    __syncthreads();
    out[1] = 1;
  }
}

// emu_test_plain_barrier is listed as plain but has a barrier.
extern "C" __global__ void emu_test_plain_barrier(float* out) {
  __syncthreads();
  out[0] = 1;
}

// emu_test_missing_barrier: thread i reads what thread i-1 wrote to shared
// memory with no __syncthreads between (a race; right only when lower
// threads happen to run first).
extern "C" __global__ void emu_test_missing_barrier(float* out) {
  __shared__ float sh[64];
  sh[threadIdx.x] = threadIdx.x + 1;
  out[threadIdx.x] = threadIdx.x == 0 ? sh[0] : sh[threadIdx.x - 1];
}

// emu_test_cross_warp: each warp reads the other warp's shared slot after
// its own shuffles but with no __syncthreads (a race; right only while the
// warps move in step).
extern "C" __global__ void emu_test_cross_warp(float* out) {
  __shared__ float sh[2];
  int w = threadIdx.x >> 5;
  float v = warp_sum(1.0f);
  if ((threadIdx.x & 31) == 0) sh[w] = v;
  v = warp_sum(v);
  out[threadIdx.x] = sh[1 - w];
}

// emu_test_block_chain: block b reads block b-1's output (right only when
// blocks happen to run in order).
extern "C" __global__ void emu_test_block_chain(float* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x == 0 ? 1 : out[blockIdx.x - 1] + 1;
}

// emu_test_unwritten_shared reads shared memory nobody wrote.
extern "C" __global__ void emu_test_unwritten_shared(float* out) {
  __shared__ float sh[32];
  out[threadIdx.x] = sh[threadIdx.x];
}

const emu::Entry emu_selftest_table[] = {
    EMU_ENTRY(emu_test_block_sum),
    EMU_ENTRY(emu_test_early_exit),
    EMU_ENTRY(emu_test_divergent),
    EMU_PLAIN(emu_test_plain_barrier),
    EMU_ENTRY(emu_test_missing_barrier),
    EMU_ENTRY(emu_test_cross_warp),
    EMU_PLAIN(emu_test_block_chain),
    EMU_ENTRY(emu_test_unwritten_shared),
};
const int emu_selftest_len = sizeof emu_selftest_table / sizeof emu_selftest_table[0];
