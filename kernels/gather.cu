// Embedding gather/scatter-add and relative-position bias; CPU references in
// ref_gather.go. The scatter-adds keep the reference's order per output
// element, so they are deterministic and bit-identical.
extern "C" __global__ void embed_fwd(int n, int d, const float* table, const int* ids, float* y) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < (long long)n * d;
       e += (long long)gridDim.x * blockDim.x) {
    long long i = e / d;
    y[e] = table[(long long)ids[i] * d + e % d];
  }
}

// embed_grad: dtable must be zeroed first; one thread per column.
extern "C" __global__ void embed_grad(int v, int d, int n, const float* dy, const int* ids, float* dtable) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= d) return;
  for (int i = 0; i < n; i++) dtable[(long long)ids[i] * d + j] += dy[(long long)i * d + j];
}

extern "C" __global__ void relbias_fwd(int nb, int h, int tq, int tk, const float* table, const int* buckets,
                                       float* y) {
  int n = tq * tk;
  long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e >= (long long)h * n) return;
  int k = (int)(e / n), p = (int)(e % n);
  y[e] = table[buckets[p] * h + k];
}

// relbias_grad: one thread per table entry (bucket, head), positions in order.
extern "C" __global__ void relbias_grad(int nb, int h, int tq, int tk, const float* dy, const int* buckets,
                                        float* dtable) {
  int n = tq * tk;
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= nb * h) return;
  int b = e / h, k = e % h;
  float acc = 0;
  for (int p = 0; p < n; p++)
    if (buckets[p] == b) acc += dy[(long long)k * n + p];
  dtable[e] = acc;
}
