// Elementwise, broadcast and reduction kernels, dropout, Adam and gradient
// clipping; CPU references in ref_elem.go, ref_dropout.go, ref_optim.go.
// Compiled with -fmad=false so a*b+c rounds twice, as in Go.
#include "common.cuh"

#define GRID_STRIDE(i, n) \
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

extern "C" __global__ void binary_f32(int op, int n, const float* a, int as, const float* b, int bs, float* y) {
  GRID_STRIDE(i, n) {
    float x = a[i * as], z = b[i * bs], r;
    switch (op) {
      case 0: r = x + z; break;
      case 1: r = x - z; break;
      case 2: r = x * z; break;
      case 3: r = x / z; break;
      default: r = x >= z ? 1.0f : 0.0f; break;
    }
    y[i] = r;
  }
}

extern "C" __global__ void add_bias(int n, int d, const float* x, const float* b, float* y) {
  GRID_STRIDE(i, (long long)n * d) { y[i] = x[i] + b[i % d]; }
}

extern "C" __global__ void repeat_rows(int n, int d, const float* b, float* y) {
  GRID_STRIDE(i, (long long)n * d) { y[i] = b[i % d]; }
}

// One thread per column, rows in SumRowsRef's chunked order: bit-identical.
extern "C" __global__ void sum_rows(int n, int d, const float* x, float* y) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= d) return;
  float acc = 0.0f;
  for (int c = 0; c * SUM_CHUNK < n; c++) {
    float part = 0.0f;
    int end = min((c + 1) * SUM_CHUNK, n);
    for (int r = c * SUM_CHUNK; r < end; r++) part += x[(long long)r * d + j];
    acc += part;
  }
  y[j] = acc;
}

extern "C" __global__ void relu_fwd(int n, const float* x, float* y) {
  GRID_STRIDE(i, n) { y[i] = (x[i] > 0.0f || isnan(x[i])) ? x[i] : 0.0f; }  // Go's max(v, 0)
}

extern "C" __global__ void relu_grad(int n, const float* y, const float* dy, float* dx) {
  GRID_STRIDE(i, n) {
    unsigned u = __float_as_uint(y[i]);
    unsigned m = (unsigned)((int)(u | (0u - u)) >> 31);
    dx[i] = __uint_as_float(__float_as_uint(dy[i]) & m);
  }
}

#define GELU_C 0.7978845608028654
#define GELU_A 0.044715

extern "C" __global__ void gelu_fwd(int n, const float* x, float* y) {
  GRID_STRIDE(i, n) {
    double v = x[i];
    double t = tanh(GELU_C * (v + GELU_A * v * v * v));
    y[i] = (float)(0.5 * v * (1 + t));
  }
}

extern "C" __global__ void gelu_grad(int n, const float* x, const float* dy, float* dx) {
  GRID_STRIDE(i, n) {
    double v = x[i];
    double t = tanh(GELU_C * (v + GELU_A * v * v * v));
    double dt = (1 - t * t) * GELU_C * (1 + 3 * GELU_A * v * v);
    dx[i] = dy[i] * (float)(0.5 * (1 + t) + 0.5 * v * dt);
  }
}

// The exact GELU x Φ(x) = 0.5 x (1 + erf(x/√2)) and its derivative
// Φ(x) + x φ(x), in double like the CPU references.
extern "C" __global__ void gelu_erf_fwd(int n, const float* x, float* y) {
  GRID_STRIDE(i, n) {
    double v = x[i];
    y[i] = (float)(0.5 * v * (1 + erf(v * 0.7071067811865476)));
  }
}

extern "C" __global__ void gelu_erf_grad(int n, const float* x, const float* dy, float* dx) {
  GRID_STRIDE(i, n) {
    double v = x[i];
    double d = 0.5 * (1 + erf(v * 0.7071067811865476)) + v * exp(-0.5 * v * v) * 0.3989422804014327;
    dx[i] = (float)(dy[i] * d);
  }
}

// ---- dropout: math/rand/v2 PCG-DXSM, jumped ahead per thread ----

struct u128 { unsigned long long hi, lo; };

__device__ __forceinline__ u128 mul128(u128 a, u128 b) {
  u128 r;
  r.lo = a.lo * b.lo;
  r.hi = __umul64hi(a.lo, b.lo) + a.hi * b.lo + a.lo * b.hi;
  return r;
}

__device__ __forceinline__ u128 add128(u128 a, u128 b) {
  u128 r;
  r.lo = a.lo + b.lo;
  r.hi = a.hi + b.hi + (r.lo < a.lo ? 1ull : 0ull);
  return r;
}

#define PCG_MUL_HI 2549297995355413924ull
#define PCG_MUL_LO 4865540595714422341ull
#define PCG_INC_HI 6364136223846793005ull
#define PCG_INC_LO 1442695040888963407ull

// pcg_advance is PCGState.Advance.
__device__ u128 pcg_advance(u128 s, unsigned long long k) {
  u128 m = {PCG_MUL_HI, PCG_MUL_LO}, a = {PCG_INC_HI, PCG_INC_LO};
  u128 am = {0, 1}, aa = {0, 0}, one = {0, 1};
  while (k > 0) {
    if (k & 1) {
      am = mul128(am, m);
      aa = add128(mul128(aa, m), a);
    }
    a = mul128(add128(m, one), a);
    m = mul128(m, m);
    k >>= 1;
  }
  return add128(mul128(am, s), aa);
}

// pcg_next is PCGState.Uint64.
__device__ __forceinline__ unsigned long long pcg_next(u128* s) {
  u128 m = {PCG_MUL_HI, PCG_MUL_LO}, inc = {PCG_INC_HI, PCG_INC_LO};
  *s = add128(mul128(*s, m), inc);
  unsigned long long hi = s->hi;
  hi ^= hi >> 32;
  hi *= 0xda942042e4dd58b5ull;
  hi ^= hi >> 48;
  hi *= (s->lo | 1);
  return hi;
}

__device__ __forceinline__ unsigned long long fnv_byte(unsigned long long h, unsigned c) {
  return (h ^ c) * 1099511628211ull;
}

__device__ unsigned long long fnv_uint(unsigned long long h, unsigned long long v) {
  char buf[20];
  int n = 0;
  do {
    buf[n++] = '0' + (char)(v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0) h = fnv_byte(h, (unsigned)buf[--n]);
  return h;
}

// drop_stream is DropStream: FNV-1a of "dropout/<id>/<step>/<chunk>".
__device__ unsigned long long drop_stream(int id, unsigned long long step, int chunk) {
  unsigned long long h = 14695981039346656037ull;
  const char* pre = "dropout/";
  for (int i = 0; pre[i]; i++) h = fnv_byte(h, (unsigned)pre[i]);
  h = fnv_uint(h, (unsigned long long)id);
  h = fnv_byte(h, '/');
  h = fnv_uint(h, step);
  h = fnv_byte(h, '/');
  return fnv_uint(h, (unsigned long long)chunk);
}

#define DROP_PAIRS 16  // draws (element pairs) per thread after one jump

// dropout: thread t owns DROP_PAIRS consecutive draws of one chunk.
extern "C" __global__ void dropout_fwd(int n, unsigned th, float keep, unsigned long long seed, int id,
                                       unsigned long long step, const float* x, float* y, float* mask) {
  const int per_chunk = DROP_CHUNK / 2 / DROP_PAIRS;  // threads per chunk
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  int chunk = (int)(t / per_chunk);
  int k0 = (int)(t % per_chunk) * DROP_PAIRS;  // first draw in the chunk
  long long base = (long long)chunk * DROP_CHUNK;
  if (base + 2LL * k0 >= n) return;
  u128 s = {seed, drop_stream(id, step, chunk)};
  s = pcg_advance(s, (unsigned long long)k0);
  for (int k = k0; k < k0 + DROP_PAIRS; k++) {
    long long i = base + 2LL * k;
    if (i >= n) break;
    unsigned long long u = pcg_next(&s);
    float m0 = (unsigned)u < th ? 0.0f : keep;
    mask[i] = m0;
    y[i] = x[i] * m0;
    if (i + 1 < n) {
      float m1 = (unsigned)(u >> 32) < th ? 0.0f : keep;
      mask[i + 1] = m1;
      y[i + 1] = x[i + 1] * m1;
    }
  }
}

extern "C" __global__ void dropout_grad(int n, const float* dy, const float* mask, float* dx) {
  GRID_STRIDE(i, n) { dx[i] = dy[i] * mask[i]; }
}

// 32x32 tiles through shared memory, so both reads and writes coalesce.
extern "C" __global__ void transpose2d(int rows, int cols, const float* x, float* y) {
  __shared__ float tile[32][33];
  int c = blockIdx.x * 32 + threadIdx.x, r0 = blockIdx.y * 32;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    int r = r0 + k;
    if (r < rows && c < cols) tile[k][threadIdx.x] = x[(long long)r * cols + c];
  }
  __syncthreads();
  int r = r0 + threadIdx.x, cb = blockIdx.x * 32;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    int cc = cb + k;
    if (cc < cols && r < rows) y[(long long)cc * rows + r] = tile[threadIdx.x][k];
  }
}

extern "C" __global__ void adam_step(int n, float b1, float b2, float alpha, float eps, float decay, float* p,
                                     const float* g, float* m, float* v) {
  GRID_STRIDE(i, n) {
    float gi = g[i];
    float mi = b1 * m[i] + (1 - b1) * gi;
    float vi = b2 * v[i] + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * decay - alpha * mi / ((float)sqrt((double)vi) + eps);
  }
}

// sum_squares writes block b's Σ x² (float64) to part[b]; sum_parts then
// adds part[0..nb) to acc[0] in a fixed order. Two kernels rather than an
// atomicAdd of the block sums: the atomics' order, and with it the last
// bits of the gradient norm and of every clipped weight, would change from
// run to run, and the same seed must give the same bytes.
extern "C" __global__ void sum_squares(int n, const float* x, double* part) {
  __shared__ double sh[32];
  double s = 0;
  GRID_STRIDE(i, n) {
    double v = x[i];
    s += v * v;
  }
  s = block_sum_d(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" __global__ void sum_parts(int nb, const double* part, double* acc) {
  __shared__ double sh[32];
  double s = 0;
  for (int i = threadIdx.x; i < nb; i += blockDim.x) s += part[i];
  s = block_sum_d(s, sh);
  if (threadIdx.x == 0) acc[0] += s;
}

// Multi-tensor forms of sum_squares, clip_by_norm and adam_step: one launch
// covers every weight tensor of a model (about 140 for the paper-size
// Transformer), where one launch per tensor made the optimizer about 40% of
// a training step's launches. Element i of the concatenation of nt tensors
// is element i - off[t] of tensor t, off[t] <= i < off[t+1]; a thread's
// indices only grow, so its tensor cursor only moves forward. The
// per-element arithmetic is the single-tensor kernels'.
extern "C" __global__ void sum_squares_multi(int nt, const float* const* x, const long long* off, double* part) {
  __shared__ double sh[32];
  double s = 0;
  int t = 0;
  GRID_STRIDE(i, off[nt]) {
    while (i >= off[t + 1]) t++;
    double v = x[t][i - off[t]];
    s += v * v;
  }
  s = block_sum_d(s, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" __global__ void clip_by_norm_multi(int nt, const double* sq, float limit, float* const* x,
                                              const long long* off) {
  float norm = (float)sqrt(sq[0]);
  if (limit <= 0 || norm <= limit || isnan(norm) || isinf(norm)) return;
  float s = limit / norm;
  int t = 0;
  GRID_STRIDE(i, off[nt]) {
    while (i >= off[t + 1]) t++;
    x[t][i - off[t]] *= s;
  }
}

extern "C" __global__ void adam_step_multi(int nt, float b1, float b2, float alpha, float eps, float decay,
                                           float* const* p, const float* const* g, float* const* m,
                                           float* const* v, const long long* off) {
  int t = 0;
  GRID_STRIDE(i, off[nt]) {
    while (i >= off[t + 1]) t++;
    long long j = i - off[t];
    float gi = g[t][j];
    float mi = b1 * m[t][j] + (1 - b1) * gi;
    float vi = b2 * v[t][j] + (1 - b2) * gi * gi;
    m[t][j] = mi;
    v[t][j] = vi;
    p[t][j] = p[t][j] * decay - alpha * mi / ((float)sqrt((double)vi) + eps);
  }
}

extern "C" __global__ void clip_by_norm(int n, const double* sq, float limit, float* x) {
  float norm = (float)sqrt(sq[0]);
  if (limit <= 0 || norm <= limit || isnan(norm) || isinf(norm)) return;
  float s = limit / norm;
  GRID_STRIDE(i, n) { x[i] *= s; }
}
