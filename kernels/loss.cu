// Fused softmax + cross-entropy (ignore index, label smoothing) and the
// decoder's row log-softmax, argmax and top-k; CPU references in
// ref_loss.go. One block per row; exp and the sums in float64 as the
// references, reduced in a tree.
#include "common.cuh"

// row_lse returns max and max + log Σ exp(z - max) of row to every thread.
__device__ void row_lse(const float* row, int v, float* mx_out, float* lse_out, double* shd, float* shf) {
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < v; j += blockDim.x) mx = fmaxf(mx, row[j]);
  mx = block_max(mx, shf);
  double s = 0;
  for (int j = threadIdx.x; j < v; j += blockDim.x) s += exp((double)(row[j] - mx));
  s = block_sum_d(s, shd);
  *mx_out = mx;
  *lse_out = mx + (float)log(s);
}

// ce_rows writes each row's loss (0 for ignored rows) to rowloss [N].
extern "C" __global__ void ce_rows(int n, int v, int ignore, float smoothing, const float* x, const int* t,
                                   double* rowloss) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int r = blockIdx.x;
  int tr = t[r];
  if (tr == ignore) {
    if (threadIdx.x == 0) rowloss[r] = 0;
    return;
  }
  const float* row = x + (long long)r * v;
  float mx, lse;
  row_lse(row, v, &mx, &lse, shd, shf);
  double eps = smoothing;
  double l = (double)lse - (1 - eps) * (double)row[tr];
  if (eps > 0) {
    double s = 0;
    for (int j = threadIdx.x; j < v; j += blockDim.x) s += (double)row[j];
    s = block_sum_d(s, shd);
    l -= eps * s / v;
  }
  if (threadIdx.x == 0) rowloss[r] = l;
}

// ce_reduce: one block; loss[0] = mean of the non-ignored rows' losses, and
// count[0] = their number (read by ce_grad).
extern "C" __global__ void ce_reduce(int n, int ignore, const int* t, const double* rowloss, float* loss,
                                     int* count) {
  __shared__ double shd[32];
  double s = 0, c = 0;
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    if (t[r] == ignore) continue;
    s += rowloss[r];
    c += 1;
  }
  s = block_sum_d(s, shd);
  c = block_sum_d(c, shd);
  if (threadIdx.x == 0) {
    loss[0] = c > 0 ? (float)(s / c) : 0.0f;
    count[0] = (int)c;
  }
}

// ce_count: one block; count[0] = number of non-ignored rows.
extern "C" __global__ void ce_count(int n, int ignore, const int* t, int* count) {
  __shared__ double shd[32];
  double c = 0;
  for (int r = threadIdx.x; r < n; r += blockDim.x) c += t[r] != ignore ? 1 : 0;
  c = block_sum_d(c, shd);
  if (threadIdx.x == 0) count[0] = (int)c;
}

extern "C" __global__ void ce_grad(int n, int v, int ignore, float smoothing, const float* x, const int* t,
                                   const int* count, const float* dl, float* dx) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int r = blockIdx.x;
  int tr = t[r];
  float* d = dx + (long long)r * v;
  if (tr == ignore) {
    for (int j = threadIdx.x; j < v; j += blockDim.x) d[j] = 0;
    return;
  }
  const float* row = x + (long long)r * v;
  float mx, lse;
  row_lse(row, v, &mx, &lse, shd, shf);
  float scale = dl[0] / (float)count[0];
  float u = smoothing / (float)v;
  for (int j = threadIdx.x; j < v; j += blockDim.x) {
    float g = scale * ((float)exp((double)(row[j] - lse)) - u);
    if (j == tr) g -= scale * (1 - smoothing);
    d[j] = g;
  }
}

extern "C" __global__ void log_softmax(int n, int v, const float* x, float* y) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * v;
  float mx, lse;
  row_lse(row, v, &mx, &lse, shd, shf);
  // The reference adds max after rounding the log: l = float(log s) + max.
  float l = lse;
  for (int j = threadIdx.x; j < v; j += blockDim.x) y[(long long)r * v + j] = row[j] - l;
}

extern "C" __global__ void logprob_at(int n, int v, const float* x, const int* t, double* out) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * v;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < v; j += blockDim.x) mx = fmaxf(mx, row[j]);
  mx = block_max(mx, shf);
  double s = 0;
  for (int j = threadIdx.x; j < v; j += blockDim.x) s += exp((double)(row[j] - mx));
  s = block_sum_d(s, shd);
  if (threadIdx.x == 0) out[r] = (double)(row[t[r]] - mx) - log(s);
}

// better reports whether (a, ia) precedes (b, ib): larger value first, then
// smaller id.
__device__ __forceinline__ bool better(float a, int ia, float b, int ib) {
  if (ib < 0) return ia >= 0;
  if (ia < 0) return false;
  return a > b || (a == b && ia < ib);
}

// block_best reduces (value, id) pairs to the best across the block.
__device__ void block_best(float* val, int* id, float* sv, int* si) {
  for (int o = 16; o > 0; o >>= 1) {
    float ov = __shfl_xor_sync(0xffffffffu, *val, o);
    int oi = __shfl_xor_sync(0xffffffffu, *id, o);
    if (better(ov, oi, *val, *id)) *val = ov, *id = oi;
  }
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) sv[w] = *val, si[w] = *id;
  __syncthreads();
  int nw = blockDim.x >> 5;
  *val = lane < nw ? sv[lane] : -INFINITY;
  *id = lane < nw ? si[lane] : -1;
  for (int o = 16; o > 0; o >>= 1) {
    float ov = __shfl_xor_sync(0xffffffffu, *val, o);
    int oi = __shfl_xor_sync(0xffffffffu, *id, o);
    if (better(ov, oi, *val, *id)) *val = ov, *id = oi;
  }
}

// argmax: the greedy decoder's choice (ArgmaxRef): the first allowed id of
// the row's maximum when it exceeds row[init], else init.
extern "C" __global__ void argmax_rows(int n, int v, const float* x, int init, int skip0, int skip1, int* out) {
  __shared__ float sv[32];
  __shared__ int si[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * v;
  float bv = -INFINITY;
  int bi = -1;
  for (int j = threadIdx.x; j < v; j += blockDim.x) {
    if (j == skip0 || j == skip1) continue;
    if (better(row[j], j, bv, bi)) bv = row[j], bi = j;
  }
  block_best(&bv, &bi, sv, si);
  if (threadIdx.x == 0) out[r] = (bi >= 0 && bv > row[init]) ? bi : init;
}

// topk: k rounds of a block-wide best, each restricted to the pairs that
// follow the previous pick in (value desc, id asc) order.
extern "C" __global__ void topk_rows(int n, int v, int k, const float* x, int skip0, int skip1, float* vals,
                                     int* idx) {
  __shared__ float sv[32];
  __shared__ int si[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * v;
  float pv = INFINITY;
  int pi = -1;
  for (int q = 0; q < k; q++) {
    float bv = -INFINITY;
    int bi = -1;
    for (int j = threadIdx.x; j < v; j += blockDim.x) {
      if (j == skip0 || j == skip1) continue;
      float z = row[j];
      bool after = z < pv || (z == pv && j > pi);
      if (after && better(z, j, bv, bi)) bv = z, bi = j;
    }
    block_best(&bv, &bi, sv, si);
    if (threadIdx.x == 0) {
      vals[(long long)r * k + q] = bi >= 0 ? bv : -INFINITY;
      idx[(long long)r * k + q] = bi;
    }
    if (bi >= 0) pv = bv, pi = bi;
    else pv = -INFINITY, pi = 0x7fffffff;
  }
}
