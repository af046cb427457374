// Strided-batched row-major GEMM (GemmRef in ref_gemm.go):
//   C = alpha op(A) op(B) + beta C, product z = (z / b1, z % b1) at
//   A + z0*sA0 + z1*sA1 (likewise B, C).
// gemm_tf32 runs on the tensor cores (WMMA m16n16k8, TF32 inputs, FP32
// accumulation; sm_80 and later). gemm_f32 is the FP32 SIMT path for older
// devices and for callers that need full FP32 products. Both take any shape:
// tiles are loaded through shared memory with zero padding at the edges.
#ifdef COMPBENCH_EMU
#include "emu_mma.h"  // host emulation of WMMA (build tag gpuemu)
#else
#include <mma.h>
#endif
using namespace nvcuda;

#define TM 64
#define TN 64
#define TK 16
#define LDA_S (TK + 8)  // 24 floats: rows stay 32-byte aligned for WMMA
#define LDB_S (TN + 8)
#define LDC_S (TN + 8)

struct Batch {
  long long a, b, c;
};

__device__ __forceinline__ Batch batch_offsets(int b1, long long sA0, long long sA1, long long sB0, long long sB1,
                                               long long sC0, long long sC1) {
  int z = blockIdx.z, z0 = z / b1, z1 = z % b1;
  Batch o;
  o.a = z0 * sA0 + z1 * sA1;
  o.b = z0 * sB0 + z1 * sB1;
  o.c = z0 * sC0 + z1 * sC1;
  return o;
}

// load_tiles fills As [TM][LDA_S] with op(A)[m0:m0+TM, k0:k0+TK] and
// Bs [TK][LDB_S] with op(B)[k0:k0+TK, n0:n0+TN], zero outside the matrix.
__device__ __forceinline__ void load_tiles(const float* A, const float* B, int M, int N, int K, int lda, int ldb,
                                           int ta, int tb, int m0, int n0, int k0, float* As, float* Bs) {
  for (int e = threadIdx.x; e < TM * TK; e += blockDim.x) {
    int r = e / TK, c = e % TK;
    if (ta) r = e % TM, c = e / TM;  // walk A's rows (k) contiguously
    int m = m0 + r, k = k0 + c;
    float v = 0;
    if (m < M && k < K) v = ta ? A[(long long)k * lda + m] : A[(long long)m * lda + k];
    As[r * LDA_S + c] = v;
  }
  for (int e = threadIdx.x; e < TK * TN; e += blockDim.x) {
    int r = e / TN, c = e % TN;
    if (tb) r = e % TK, c = e / TK;
    int k = k0 + r, n = n0 + c;
    float v = 0;
    if (k < K && n < N) v = tb ? B[(long long)n * ldb + k] : B[(long long)k * ldb + n];
    Bs[r * LDB_S + c] = v;
  }
}

// gemm_tf32: 128 threads (4 warps, 2x2), each warp a 32x32 block of the
// 64x64 tile as 2x2 WMMA 16x16 accumulators.
extern "C" __global__ void __launch_bounds__(128) gemm_tf32(const float* A, const float* B, float* C, int M, int N,
                                                            int K, int lda, int ldb, int ldc, int ta, int tb,
                                                            float alpha, float beta, int b1, long long sA0,
                                                            long long sA1, long long sB0, long long sB1,
                                                            long long sC0, long long sC1) {
  __shared__ __align__(32) float As[TM * LDA_S];
  __shared__ __align__(32) float Bs[TK * LDB_S];
  __shared__ __align__(32) float Cs[TM * LDC_S];
  Batch o = batch_offsets(b1, sA0, sA1, sB0, sB1, sC0, sC1);
  A += o.a;
  B += o.b;
  C += o.c;
  int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
  int warp = threadIdx.x >> 5, wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < K; k0 += TK) {
    load_tiles(A, B, M, N, K, lda, ldb, ta, tb, m0, n0, k0, As, Bs);
    __syncthreads();
    for (int kk = 0; kk < TK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb[2];
      for (int i = 0; i < 2; i++) {
        wmma::load_matrix_sync(fa[i], As + (wm + 16 * i) * LDA_S + kk, LDA_S);
        for (int t = 0; t < fa[i].num_elements; t++) fa[i].x[t] = wmma::__float_to_tf32(fa[i].x[t]);
      }
      for (int j = 0; j < 2; j++) {
        wmma::load_matrix_sync(fb[j], Bs + kk * LDB_S + wn + 16 * j, LDB_S);
        for (int t = 0; t < fb[j].num_elements; t++) fb[j].x[t] = wmma::__float_to_tf32(fb[j].x[t]);
      }
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(Cs + (wm + 16 * i) * LDC_S + wn + 16 * j, acc[i][j], LDC_S, wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < TM * TN; e += blockDim.x) {
    int r = e / TN, c = e % TN, m = m0 + r, n = n0 + c;
    if (m >= M || n >= N) continue;
    float v = alpha * Cs[r * LDC_S + c];
    float* cp = C + (long long)m * ldc + n;
    if (beta != 0) v += beta * *cp;
    *cp = v;
  }
}

// gemm_f32: 16x16 threads, each one element of a 16x16 tile; k in
// increasing order with explicit fmaf (so close to, not bit-equal with, the
// reference's separately rounded multiply-add).
#define ST 16
extern "C" __global__ void gemm_f32(const float* A, const float* B, float* C, int M, int N, int K, int lda, int ldb,
                                    int ldc, int ta, int tb, float alpha, float beta, int b1, long long sA0,
                                    long long sA1, long long sB0, long long sB1, long long sC0, long long sC1) {
  __shared__ float As[ST][ST + 1];
  __shared__ float Bs[ST][ST + 1];
  Batch o = batch_offsets(b1, sA0, sA1, sB0, sB1, sC0, sC1);
  A += o.a;
  B += o.b;
  C += o.c;
  int tx = threadIdx.x, ty = threadIdx.y;
  int m = blockIdx.y * ST + ty, n = blockIdx.x * ST + tx;
  float s = 0;
  for (int k0 = 0; k0 < K; k0 += ST) {
    int ka = k0 + tx, kb = k0 + ty;
    As[ty][tx] = (m < M && ka < K) ? (ta ? A[(long long)ka * lda + m] : A[(long long)m * lda + ka]) : 0.0f;
    Bs[ty][tx] = (kb < K && n < N) ? (tb ? B[(long long)n * ldb + kb] : B[(long long)kb * ldb + n]) : 0.0f;
    __syncthreads();
    for (int k = 0; k < ST; k++) s = fmaf(As[ty][k], Bs[k][tx], s);
    __syncthreads();
  }
  if (m < M && n < N) {
    float v = alpha * s;
    float* cp = C + (long long)m * ldc + n;
    if (beta != 0) v += beta * *cp;
    *cp = v;
  }
}
