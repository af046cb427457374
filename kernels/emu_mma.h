// Host emulation of the nvcuda::wmma subset gemm.cu uses (TF32 m16n16k8,
// row-major tiles, FP32 accumulators). On a GPU a fragment is spread over
// the 32 lanes of a warp in an unspecified layout; here every lane holds the
// whole tile, which has the same meaning for code that only loads, converts
// element by element, multiplies and stores fragments.
#pragma once

#include <string.h>

namespace emu {
void misuse(const char* m);
}

namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K>
struct dims;
template <int M, int N, int K>
struct dims<matrix_a, M, N, K> {
  static const int rows = M, cols = K;
};
template <int M, int N, int K>
struct dims<matrix_b, M, N, K> {
  static const int rows = K, cols = N;
};
template <int M, int N, int K>
struct dims<accumulator, M, N, K> {
  static const int rows = M, cols = N;
};

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static const int rows = dims<Use, M, N, K>::rows, cols = dims<Use, M, N, K>::cols;
  enum { num_elements = rows * cols };
  float x[num_elements];
};

// Rounds to the nearest TF32 value (10 mantissa bits), ties away from zero,
// as cvt.rna.tf32.f32 does; the low 13 bits are then zero.
inline float __float_to_tf32(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & ~0x1fffu;
  memcpy(&f, &u, 4);
  return f;
}

// check_tile enforces the WMMA rules for float tiles: a 256-bit aligned
// pointer and a leading dimension that is a multiple of 4 elements (on a GPU
// breaking them gives undefined results).
inline void check_tile(const float* p, unsigned ld) {
  if (reinterpret_cast<unsigned long long>(p) % 32 != 0) emu::misuse("wmma tile pointer not 256-bit aligned");
  if (ld % 4 != 0) emu::misuse("wmma leading dimension not a multiple of 4 floats");
}

template <typename Use, int M, int N, int K, typename T, typename L>
inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, float v) {
  for (int i = 0; i < f.num_elements; i++) f.x[i] = v;
}

template <typename Use, int M, int N, int K, typename T>
inline void load_matrix_sync(fragment<Use, M, N, K, T, row_major>& f, const float* p, unsigned ld) {
  check_tile(p, ld);
  for (int r = 0; r < f.rows; r++)
    for (int c = 0; c < f.cols; c++) f.x[r * f.cols + c] = p[(long long)r * ld + c];
}

template <int M, int N, int K, typename T>
inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, T>& f, unsigned ld, layout_t l) {
  check_tile(p, ld);
  for (int r = 0; r < M; r++)
    for (int c = 0; c < N; c++) {
      if (l == mem_row_major)
        p[(long long)r * ld + c] = f.x[r * N + c];
      else
        p[(long long)c * ld + r] = f.x[r * N + c];
    }
}

template <int M, int N, int K, typename TA, typename TB, typename TC, typename LA, typename LB>
inline void mma_sync(fragment<accumulator, M, N, K, TC>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                     const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c) {
  float out[M * N];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = c.x[i * N + j];
      for (int k = 0; k < K; k++) s += a.x[i * K + k] * b.x[k * N + j];
      out[i * N + j] = s;
    }
  memcpy(d.x, out, sizeof out);
}
}  // namespace wmma
}  // namespace nvcuda
