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

const emu::Entry emu_selftest_table[] = {
    EMU_ENTRY(emu_test_block_sum),
    EMU_ENTRY(emu_test_early_exit),
    EMU_ENTRY(emu_test_divergent),
    EMU_PLAIN(emu_test_plain_barrier),
};
const int emu_selftest_len = sizeof emu_selftest_table / sizeof emu_selftest_table[0];
