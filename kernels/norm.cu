// LayerNorm and masked/biased attention softmax; CPU references in
// ref_norm.go. Row statistics accumulate in float64 as ops does.
#include "common.cuh"

// row_stats returns a row's mean and rstd to every thread of its block (the
// block's threads all call it), accumulated in float64 as ops does and
// rounded to float32 as the stats buffer holds them.
__device__ __forceinline__ void row_stats(const float* row, int d, float eps, double* sh, float* mean,
                                          float* rstd) {
  double s = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) s += (double)row[j];
  double m = block_sum_d(s, sh) / d;
  double q = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    double dv = (double)row[j] - m;
    q += dv * dv;
  }
  q = block_sum_d(q, sh);
  *mean = (float)m;
  *rstd = (float)(1 / sqrt(q / d + (double)eps));
}

// layernorm_stats writes mean and rstd of each row to stats [N, 2]; one
// block per row. Only the gamma gradient, which walks columns, needs them
// stored: the forward pass and the input gradient, one block per row,
// compute their row's stats themselves, one launch each instead of two.
extern "C" __global__ void layernorm_stats(int n, int d, float eps, const float* x, float* stats) {
  __shared__ double sh[32];
  int r = blockIdx.x;
  float mean, rstd;
  row_stats(x + (long long)r * d, d, eps, sh, &mean, &rstd);
  if (threadIdx.x == 0) {
    stats[2 * r] = mean;
    stats[2 * r + 1] = rstd;
  }
}

extern "C" __global__ void layernorm_fwd(int n, int d, float eps, const float* x, const float* gamma,
                                         const float* beta, float* y) {
  __shared__ double sh[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * d;
  float mean, rstd;
  row_stats(row, d, eps, sh, &mean, &rstd);
  float* yr = y + (long long)r * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) yr[j] = (row[j] - mean) * rstd * gamma[j] + beta[j];
}

// layernorm_grad_x: one block per row; the two row sums are block
// reductions (order differs from the reference's column order).
extern "C" __global__ void layernorm_grad_x(int n, int d, float eps, const float* x, const float* gamma,
                                            const float* dy, float* dx) {
  __shared__ double shd[32];
  __shared__ float sh[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * d;
  float mean, rstd;
  row_stats(row, d, eps, shd, &mean, &rstd);
  const float* dyr = dy + (long long)r * d;
  float sg = 0, sgx = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float g = dyr[j] * gamma[j];
    sg += g;
    sgx += g * (row[j] - mean) * rstd;
  }
  float inv = 1.0f / (float)d;
  sg = block_sum(sg, sh) * inv;
  sgx = block_sum(sgx, sh) * inv;
  float* out = dx + (long long)r * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float xh = (row[j] - mean) * rstd;
    out[j] = rstd * (dyr[j] * gamma[j] - sg - xh * sgx);
  }
}

// layernorm_grad_gamma: one thread per column in the reference's chunked
// row order: bit-identical given the same stats.
extern "C" __global__ void layernorm_grad_gamma(int n, int d, const float* stats, const float* x, const float* dy,
                                                float* dgamma) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= d) return;
  float acc = 0;
  for (int c = 0; c * SUM_CHUNK < n; c++) {
    float part = 0;
    int end = min((c + 1) * SUM_CHUNK, n);
    for (int r = c * SUM_CHUNK; r < end; r++) {
      long long o = (long long)r * d + j;
      part += dy[o] * (x[o] - stats[2 * r]) * stats[2 * r + 1];
    }
    acc += part;
  }
  dgamma[j] = acc;
}

// ---- RMS norm (T5's layer norm): y = x * r * gamma, r = 1/sqrt(mean(x²)+eps) ----

// row_rms returns a row's r to every thread of its block, the squares
// summed in float64 and r rounded to float32 as the reference holds it.
__device__ __forceinline__ float row_rms(const float* row, int d, float eps, double* sh) {
  double q = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    double v = (double)row[j];
    q += v * v;
  }
  q = block_sum_d(q, sh);
  return (float)(1 / sqrt(q / d + (double)eps));
}

extern "C" __global__ void rmsnorm_stats(int n, int d, float eps, const float* x, float* stats) {
  __shared__ double sh[32];
  int r = blockIdx.x;
  float s = row_rms(x + (long long)r * d, d, eps, sh);
  if (threadIdx.x == 0) stats[r] = s;
}

extern "C" __global__ void rmsnorm_fwd(int n, int d, float eps, const float* x, const float* gamma, float* y) {
  __shared__ double sh[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * d;
  float s = row_rms(row, d, eps, sh);
  float* yr = y + (long long)r * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) yr[j] = row[j] * s * gamma[j];
}

extern "C" __global__ void rmsnorm_grad_x(int n, int d, float eps, const float* x, const float* gamma,
                                          const float* dy, float* dx) {
  __shared__ double shd[32];
  __shared__ float sh[32];
  int r = blockIdx.x;
  const float* row = x + (long long)r * d;
  float s = row_rms(row, d, eps, shd);
  const float* dyr = dy + (long long)r * d;
  float sgx = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x) sgx += dyr[j] * gamma[j] * row[j] * s;
  sgx = block_sum(sgx, sh) * (1.0f / (float)d);
  float* out = dx + (long long)r * d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) out[j] = s * (dyr[j] * gamma[j] - row[j] * s * sgx);
}

// rmsnorm_grad_gamma: one thread per column in the reference's chunked row
// order.
extern "C" __global__ void rmsnorm_grad_gamma(int n, int d, const float* stats, const float* x, const float* dy,
                                              float* dgamma) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= d) return;
  float acc = 0;
  for (int c = 0; c * SUM_CHUNK < n; c++) {
    float part = 0;
    int end = min((c + 1) * SUM_CHUNK, n);
    for (int r = c * SUM_CHUNK; r < end; r++) {
      long long o = (long long)r * d + j;
      part += dy[o] * x[o] * stats[r];
    }
    acc += part;
  }
  dgamma[j] = acc;
}

__device__ __forceinline__ long long addend_off(int b, int h, int i, int eb, int eh, int tq, int tk) {
  int bb = eb > 1 ? b : 0, hh = eh > 1 ? h : 0;
  return ((long long)(bb * eh + hh) * tq + i) * tk;
}

// attn_softmax: one warp per row of [B,H,Tq,Tk]; mask and bias may be null.
extern "C" __global__ void attn_softmax(int nb, int nh, int tq, int tk, const float* x, const float* mask, int mB,
                                        int mH, const float* bias, int bB, int bH, float* y) {
  int lane = threadIdx.x & 31;
  long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= (long long)nb * nh * tq) return;
  int i = (int)(row % tq), h = (int)((row / tq) % nh), b = (int)(row / ((long long)tq * nh));
  const float* xr = x + row * tk;
  float* yr = y + row * tk;
  const float* mr = mask ? mask + addend_off(b, h, i, mB, mH, tq, tk) : 0;
  const float* br = bias ? bias + addend_off(b, h, i, bB, bH, tq, tk) : 0;
  float mx = -INFINITY;
  for (int j = lane; j < tk; j += 32) {
    float v = xr[j];
    if (mr) v += mr[j];
    if (br) v += br[j];
    yr[j] = v;
    mx = fmaxf(mx, v);
  }
  mx = warp_max(mx);
  if (mx == -INFINITY) {
    for (int j = lane; j < tk; j += 32) yr[j] = 0;
    return;
  }
  float sum = 0;
  for (int j = lane; j < tk; j += 32) {
    float e = (float)exp((double)(yr[j] - mx));
    yr[j] = e;
    sum += e;
  }
  float inv = 1.0f / warp_sum(sum);
  for (int j = lane; j < tk; j += 32) yr[j] *= inv;
}

extern "C" __global__ void attn_softmax_grad(int rows, int tk, const float* p, const float* dp, float* ds) {
  int lane = threadIdx.x & 31;
  long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;
  const float *pr = p + row * tk, *dr = dp + row * tk;
  float dot = 0;
  for (int j = lane; j < tk; j += 32) dot += pr[j] * dr[j];
  dot = warp_sum(dot);
  for (int j = lane; j < tk; j += 32) ds[row * tk + j] = pr[j] * (dr[j] - dot);
}

// sum_to: one thread per output element, blocks added in (b, h) order:
// bit-identical.
extern "C" __global__ void sum_to(int nb, int nh, int tq, int tk, int toB, int toH, const float* x, float* y) {
  long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long plane = (long long)tq * tk;
  if (e >= (long long)toB * toH * plane) return;
  long long pos = e % plane;
  int oh = (int)((e / plane) % toH), ob = (int)(e / (plane * toH));
  float acc = 0;
  for (int b = 0; b < nb; b++) {
    if (toB > 1 && b != ob) continue;
    for (int h = 0; h < nh; h++) {
      if (toH > 1 && h != oh) continue;
      acc += x[((long long)b * nh + h) * plane + pos];
    }
  }
  y[e] = acc;
}
