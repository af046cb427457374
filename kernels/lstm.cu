// The recurrent models' kernels: the LSTM cell, additive attention, the copy
// mixture's loss and strided copies; CPU references in ref_lstm.go.
// Compiled with -fmad=false so a*b+c rounds twice, as in Go.
//
// sigmoid and tanh are float32 (expf, tanhf: a few ulp, like vecmath's,
// whose polynomials they do not reproduce bit for bit), since the gates and
// the attention scores evaluate S·H of them per row, and float64 runs at
// 1/64 rate on most GPUs; the softmax exponentials are float64, rounded, as
// the references compute them. lstm_gates_back is its reference's
// arithmetic exactly; the attention gradients sum in the reference's order
// and differ from it only through tanh. No atomics: every output element
// has one writer, so runs repeat bit for bit.
#include "common.cuh"

#ifndef GRID_STRIDE
#define GRID_STRIDE(i, n) \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)
#endif

__device__ __forceinline__ float lstm_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// src_len clamps a source length to [0, s], so a bad length cannot index
// outside the rows.
__device__ __forceinline__ int src_len(const int* len, int b, int s) { return max(0, min(len[b], s)); }

// lstm_gates: one thread per (row, unit); mask null: every row real. The
// thread reads its row's four pre-activations before writing anything, so
// outputs may alias inputs element for element.
extern "C" __global__ void __launch_bounds__(256) lstm_gates(int n, int h, float* z, const float* hprev,
                                                             const float* cprev, const float* mask, float* hout,
                                                             float* cout, float* tanhc) {
  GRID_STRIDE(e, (long long)n * h) {
    long long r = e / h;
    int k = (int)(e % h);
    float* zr = z + r * 4 * h;
    float gi = lstm_sigmoid(zr[k]), gf = lstm_sigmoid(zr[h + k]);
    float gg = tanhf(zr[2 * h + k]), go = lstm_sigmoid(zr[3 * h + k]);
    zr[k] = gi;
    zr[h + k] = gf;
    zr[2 * h + k] = gg;
    zr[3 * h + k] = go;
    float cp = cprev[e];
    float c = gf * cp + gi * gg;
    float t = tanhf(c);
    tanhc[e] = t;
    if (mask && mask[r] == 0.0f) {  // padding keeps the previous state
      hout[e] = hprev[e];
      cout[e] = cp;
    } else {
      hout[e] = go * t;
      cout[e] = c;
    }
  }
}

// lstm_gates_back: one thread per (row, unit), LSTMGatesBackRef's
// arithmetic in its order: bit-identical.
extern "C" __global__ void __launch_bounds__(256) lstm_gates_back(int n, int h, const float* gates,
                                                                  const float* tanhc, const float* cprev,
                                                                  const float* mask, const float* dhout,
                                                                  const float* dhnext, const float* dcnext, float* dz,
                                                                  float* dhprev, float* dcprev) {
  GRID_STRIDE(e, (long long)n * h) {
    long long r = e / h;
    int k = (int)(e % h);
    float* dzr = dz + r * 4 * h;
    float dh = dhout[e] + dhnext[e], dcr = dcnext[e];
    if (mask && mask[r] == 0.0f) {
      dzr[k] = 0;
      dzr[h + k] = 0;
      dzr[2 * h + k] = 0;
      dzr[3 * h + k] = 0;
      dhprev[e] = dh;
      dcprev[e] = dcr;
      continue;
    }
    const float* g = gates + r * 4 * h;
    float i = g[k], f = g[h + k], gk = g[2 * h + k], o = g[3 * h + k], t = tanhc[e];
    float dcn = dcr + dh * o * (1 - t * t);
    dzr[k] = dcn * gk * i * (1 - i);
    dzr[h + k] = dcn * cprev[e] * f * (1 - f);
    dzr[2 * h + k] = dcn * i * (1 - gk * gk);
    dzr[3 * h + k] = dh * t * o * (1 - o);
    dcprev[e] = dcn * f;
    dhprev[e] = 0;
  }
}

// add_attn: one block per query row i. Warp w scores source positions
// j = w, w + warps, ... (lanes over H, then a warp sum) into att's row,
// which the block then turns into a softmax in place; the row's writes
// are visible to the whole block after __syncthreads.
extern "C" __global__ void __launch_bounds__(256) add_attn(int r, int s, int h, int nb, const float* q,
                                                           const float* keys, const float* va, const int* srclen,
                                                           float* att) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int i = blockIdx.x, b = i % nb;
  int n = src_len(srclen, b, s);
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const float* qi = q + (long long)i * h;
  float* a = att + (long long)i * s;
  for (int j = n + threadIdx.x; j < s; j += blockDim.x) a[j] = 0;
  if (n == 0) return;  // uniform across the block
  for (int j = w; j < n; j += nw) {
    const float* k = keys + ((long long)j * nb + b) * h;
    float e = 0;
    for (int x = lane; x < h; x += 32) e += va[x] * tanhf(qi[x] + k[x]);
    e = warp_sum(e);
    if (lane == 0) a[j] = e;
  }
  __syncthreads();
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) mx = fmaxf(mx, a[j]);
  mx = block_max(mx, shf);
  double sum = 0;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    float e = (float)exp((double)(a[j] - mx));
    a[j] = e;  // each thread rewrites only the entries it read
    sum += e;
  }
  float tot = (float)block_sum_d(sum, shd);
  for (int j = threadIdx.x; j < n; j += blockDim.x) a[j] /= tot;
}

// add_attn_back_q: one thread per (query row i, column x), positions j in
// increasing order as AddAttnBackRef: dq and dvaPart.
extern "C" __global__ void __launch_bounds__(256) add_attn_back_q(int r, int s, int h, int nb, const float* q,
                                                                  const float* keys, const float* va,
                                                                  const int* srclen, const float* de, float* dq,
                                                                  float* dvapart) {
  GRID_STRIDE(e, (long long)r * h) {
    long long i = e / h;
    int x = (int)(e % h), b = (int)(i % nb);
    int n = src_len(srclen, b, s);
    const float* dei = de + i * s;
    float qv = q[e], vx = va[x], dqv = 0, dv = 0;
    for (int j = 0; j < n; j++) {
      float t = tanhf(qv + keys[((long long)j * nb + b) * h + x]);
      float d = dei[j];
      dv += d * t;
      dqv += d * vx * (1 - t * t);
    }
    dq[e] = dqv;
    dvapart[e] = dv;
  }
}

// add_attn_back_k: one thread per (key row j*nb+b, column x), summing over
// the query rows i of batch row b in increasing i as AddAttnBackRef; 0 at
// j >= srcLen[b]. Recomputing tanh here instead of storing u [R,S,H] keeps
// the backward pass's memory at its inputs'.
extern "C" __global__ void __launch_bounds__(256) add_attn_back_k(int r, int s, int h, int nb, const float* q,
                                                                  const float* keys, const float* va,
                                                                  const int* srclen, const float* de,
                                                                  float* dkeys) {
  GRID_STRIDE(e, (long long)s * nb * h) {
    long long row = e / h;
    int x = (int)(e % h), j = (int)(row / nb), b = (int)(row % nb);
    float acc = 0;
    if (j < src_len(srclen, b, s)) {
      float kv = keys[e], vx = va[x];
      for (long long i = b; i < r; i += nb) {
        float t = tanhf(q[i * h + x] + kv);
        acc += de[i * s + j] * vx * (1 - t * t);
      }
    }
    dkeys[e] = acc;
  }
}

// copy_loss: one block per row; CopyLossRef's formulas, the softmax's
// exponentials in float64 rounded to float32 and summed in a tree.
extern "C" __global__ void __launch_bounds__(256) copy_loss(int r, int v, int s, int n, int ignore,
                                                            const float* logits, const float* zg, const float* att,
                                                            const float* match, const int* tgt, float* prob,
                                                            float* dlogits, float* dzg, float* datt) {
  __shared__ double shd[32];
  __shared__ float shf[32];
  int i = blockIdx.x, y = tgt[i];
  const float* row = logits + (long long)i * v;
  const float *ar = att + (long long)i * s, *mr = match + (long long)i * s;
  float* d = dlogits + (long long)i * v;
  float* da = datt + (long long)i * s;
  bool skip = y == ignore;
  float mx = -INFINITY, sum = 1, pg = 0, gen = 0, cm = 0, P = 0;
  if (!skip) {  // uniform across the block
    for (int k = threadIdx.x; k < v; k += blockDim.x) mx = fmaxf(mx, row[k]);
    mx = block_max(mx, shf);
    double sd = 0;
    for (int k = threadIdx.x; k < v; k += blockDim.x) sd += (float)exp((double)(row[k] - mx));
    sum = (float)block_sum_d(sd, shd);
    float c = 0;
    for (int j = threadIdx.x; j < s; j += blockDim.x)
      if (mr[j] != 0.0f) c += ar[j];
    cm = block_sum(c, shf);
    pg = lstm_sigmoid(zg[i]);
    if (y >= 0 && y < v) gen = (float)exp((double)(row[y] - mx)) / sum;
    P = pg * gen + (1 - pg) * cm;
  }
  if (threadIdx.x == 0) prob[i] = P;
  if (skip || P < 1e-30f) {  // no gradient
    for (int k = threadIdx.x; k < v; k += blockDim.x) d[k] = 0;
    for (int j = threadIdx.x; j < s; j += blockDim.x) da[j] = 0;
    if (threadIdx.x == 0) dzg[i] = 0;
    return;
  }
  float dP = -1 / (P * (float)n);
  if (threadIdx.x == 0) dzg[i] = dP * (gen - cm) * pg * (1 - pg);
  bool in = y >= 0 && y < v;  // a copy id >= V has no softmax term
  float dg = dP * pg * gen;
  for (int k = threadIdx.x; k < v; k += blockDim.x) {
    float g = 0;
    if (in) {
      g = -dg * ((float)exp((double)(row[k] - mx)) / sum);
      if (k == y) g += dg;
    }
    d[k] = g;
  }
  float dc = dP * (1 - pg);
  for (int j = threadIdx.x; j < s; j += blockDim.x) da[j] = mr[j] != 0.0f ? dc : 0.0f;
}

// copy2d: one thread per element of a rows×cols block between row strides.
extern "C" __global__ void __launch_bounds__(256) copy2d(int rows, int cols, const float* src, int lds, float* dst,
                                                         int ldd) {
  GRID_STRIDE(e, (long long)rows * cols) {
    long long r = e / cols;
    int c = (int)(e % cols);
    dst[r * ldd + c] = src[r * lds + c];
  }
}

extern "C" __global__ void __launch_bounds__(256) fill_f32(int n, float v, float* y) {
  GRID_STRIDE(i, n) { y[i] = v; }
}
