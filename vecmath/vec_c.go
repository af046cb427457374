//go:build cgo && !purego

package vecmath

// The functions of go.go in C, so that the compiler vectorises them. The
// polynomial replaces the table: e^r on |r| <= ln2/2 by its Taylor series
// through r^7 (relative error below 1e-8).

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include <string.h>

// Without trapping math the clamps and sign selects become blends, which
// is what lets GCC vectorise the loops; no floating-point traps are
// enabled in a Go program anyway.
#pragma GCC optimize("no-trapping-math")

#define CG_RND 12582912.0f // 1.5·2^23: adding and subtracting it rounds to an integer
#define CG_GELU_C 0.7978845608028654f
#define CG_GELU_A 0.044715f
#define CG_CHUNK 256

static inline float cg_pow2(float fn) {
	int32_t b = ((int32_t)fn + 127) << 23;
	float s;
	memcpy(&s, &b, 4);
	return s;
}

// e^r − 1 for |r| <= ln2/2.
static inline float cg_expm1_core(float r) {
	return r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
}

// e^y for |y| <= 87.
static inline float cg_exp(float y) {
	float fn = (y * 1.44269504088896341f + CG_RND) - CG_RND;
	float r = y - fn * 0.693359375f - fn * -2.12194440e-4f;
	return (1.0f + cg_expm1_core(r)) * cg_pow2(fn);
}

static inline float cg_clamp87(float y) {
	y = y > 87.0f ? 87.0f : y;
	return y < -87.0f ? -87.0f : y;
}

// cg_exp_sum_* (Σ e^(x_i − mx)) writes the exponentials a chunk at a time
// into a buffer and sums each chunk in eight float lanes (separate
// accumulators vectorise without reassociating a sum), the chunks in
// double. cg_max_* keeps eight lanes for the same reason.
#define CG_KERNELS(SUF, ATTR)                                              \
	ATTR static void cg_sigmoid_##SUF(float *x, long n) {                  \
		for (long i = 0; i < n; i++)                                       \
			x[i] = 1.0f / (1.0f + cg_exp(cg_clamp87(-x[i])));              \
	}                                                                      \
	ATTR static void cg_tanh_##SUF(float *x, long n) {                     \
		for (long i = 0; i < n; i++) {                                     \
			float v = x[i];                                                \
			float a = v < 0 ? -v : v;                                      \
			a = a > 9.0f ? 9.0f : a;                                       \
			float y = 2 * a;                                               \
			float fn = (y * 1.44269504088896341f + CG_RND) - CG_RND;       \
			float r = y - fn * 0.693359375f - fn * -2.12194440e-4f;        \
			float s = cg_pow2(fn);                                         \
			float u = s * cg_expm1_core(r) + (s - 1.0f);                   \
			float t = u / (u + 2.0f);                                      \
			x[i] = v < 0 ? -t : t;                                         \
		}                                                                  \
	}                                                                      \
	ATTR static void cg_gelu_##SUF(const float *x, float *y, long n) {     \
		for (long i = 0; i < n; i++) {                                     \
			float v = x[i];                                                \
			float z = -2 * CG_GELU_C * (v + CG_GELU_A * v * v * v);        \
			float s = 1.0f / (1.0f + cg_exp(cg_clamp87(z)));               \
			y[i] = v * (z > 87.0f ? 0.0f : s);                             \
		}                                                                  \
	}                                                                      \
	ATTR static void cg_gelu_grad_##SUF(const float *x, const float *dy,   \
	                                    float *dx, long n) {               \
		for (long i = 0; i < n; i++) {                                     \
			float v = x[i], v2 = v * v;                                    \
			float z = -2 * CG_GELU_C * (v + CG_GELU_A * v2 * v);           \
			float e = cg_exp(cg_clamp87(z));                               \
			float s = 1.0f / (1.0f + e);                                   \
			float ss = e * s * s;                                          \
			s = z > 87.0f ? 0.0f : (z < -87.0f ? 1.0f : s);                \
			ss = (z > 87.0f || z < -87.0f) ? 0.0f : ss;                    \
			dx[i] = dy[i] * (s + v * ss * (2 * CG_GELU_C) *                \
			                         (1 + 3 * CG_GELU_A * v2));            \
		}                                                                  \
	}                                                                      \
	ATTR static double cg_exp_sum_##SUF(const float *x, long n, float mx) { \
		float buf[CG_CHUNK];                                               \
		double sum = 0;                                                    \
		for (long i = 0; i < n; i += CG_CHUNK) {                           \
			long m = n - i < CG_CHUNK ? n - i : CG_CHUNK;                  \
			for (long j = 0; j < m; j++) {                                 \
				float y = x[i + j] - mx;                                   \
				buf[j] = cg_exp(y < -87.0f ? -87.0f : y);                  \
			}                                                              \
			for (long j = m; j < CG_CHUNK; j++) buf[j] = 0;                \
			float acc[8] = {0};                                            \
			for (long j = 0; j < CG_CHUNK; j += 8)                         \
				for (int k = 0; k < 8; k++) acc[k] += buf[j + k];          \
			for (int k = 0; k < 8; k++) sum += acc[k];                     \
		}                                                                  \
		return sum;                                                        \
	}                                                                      \
	ATTR static void cg_exp_shift_##SUF(const float *x, float c, float *y, \
	                                    long n) {                          \
		for (long i = 0; i < n; i++) {                                     \
			float v = x[i] - c;                                            \
			y[i] = cg_exp(v < -87.0f ? -87.0f : v);                        \
		}                                                                  \
	}                                                                      \
	ATTR static float cg_dot_axpy_##SUF(const float *x, const float *y,    \
	                                    float a, float *z, long n) {       \
		float acc[8] = {0};                                                \
		long i = 0;                                                        \
		for (; i + 8 <= n; i += 8)                                         \
			for (int k = 0; k < 8; k++) {                                  \
				acc[k] += x[i + k] * y[i + k];                             \
				z[i + k] += a * x[i + k];                                  \
			}                                                              \
		for (; i < n; i++) {                                               \
			acc[0] += x[i] * y[i];                                         \
			z[i] += a * x[i];                                              \
		}                                                                  \
		return ((acc[0] + acc[4]) + (acc[1] + acc[5])) +                   \
		       ((acc[2] + acc[6]) + (acc[3] + acc[7]));                    \
	}                                                                      \
	ATTR static void cg_score_back_##SUF(float de, const float *u,         \
	                                     const float *v, float *dv,        \
	                                     float *dz1, float *dz2, long n) { \
		for (long i = 0; i < n; i++) {                                     \
			dv[i] += de * u[i];                                            \
			float d = de * v[i] * (1 - u[i] * u[i]);                       \
			dz1[i] += d;                                                   \
			dz2[i] += d;                                                   \
		}                                                                  \
	}                                                                      \
	ATTR static float cg_max_##SUF(const float *x, long n) {               \
		float m[8];                                                        \
		for (int k = 0; k < 8; k++) m[k] = x[0];                           \
		long i = 0;                                                        \
		for (; i + 8 <= n; i += 8)                                         \
			for (int k = 0; k < 8; k++)                                    \
				m[k] = x[i + k] > m[k] ? x[i + k] : m[k];                  \
		for (; i < n; i++) m[0] = x[i] > m[0] ? x[i] : m[0];               \
		for (int k = 1; k < 8; k++) m[0] = m[k] > m[0] ? m[k] : m[0];      \
		return m[0];                                                       \
	}

CG_KERNELS(avx2, __attribute__((target("avx2,fma"))))
CG_KERNELS(base, )

static int cg_avx2 = -1;

static int cg_use_avx2(void) {
	if (cg_avx2 < 0) {
		__builtin_cpu_init();
		cg_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	}
	return cg_avx2;
}

static void cg_sigmoid(float *x, long n) {
	if (cg_use_avx2()) cg_sigmoid_avx2(x, n); else cg_sigmoid_base(x, n);
}

static void cg_tanh(float *x, long n) {
	if (cg_use_avx2()) cg_tanh_avx2(x, n); else cg_tanh_base(x, n);
}

static void cg_gelu(const float *x, float *y, long n) {
	if (cg_use_avx2()) cg_gelu_avx2(x, y, n); else cg_gelu_base(x, y, n);
}

static void cg_gelu_grad(const float *x, const float *dy, float *dx, long n) {
	if (cg_use_avx2()) cg_gelu_grad_avx2(x, dy, dx, n); else cg_gelu_grad_base(x, dy, dx, n);
}

// cg_exp_sum stores max(x) in *mx and returns Σ e^(x_i − max).
static double cg_exp_sum(const float *x, long n, float *mx) {
	if (cg_use_avx2()) {
		*mx = cg_max_avx2(x, n);
		return cg_exp_sum_avx2(x, n, *mx);
	}
	*mx = cg_max_base(x, n);
	return cg_exp_sum_base(x, n, *mx);
}

static void cg_exp_shift(const float *x, float c, float *y, long n) {
	if (cg_use_avx2()) cg_exp_shift_avx2(x, c, y, n); else cg_exp_shift_base(x, c, y, n);
}

static float cg_dot_axpy(const float *x, const float *y, float a, float *z, long n) {
	if (cg_use_avx2()) return cg_dot_axpy_avx2(x, y, a, z, n);
	return cg_dot_axpy_base(x, y, a, z, n);
}

static void cg_score_back(float de, const float *u, const float *v, float *dv, float *dz1, float *dz2, long n) {
	if (cg_use_avx2()) cg_score_back_avx2(de, u, v, dv, dz1, dz2, n);
	else cg_score_back_base(de, u, v, dv, dz1, dz2, n);
}

// cg_lstm_act applies σ, σ, tanh, σ to the i, f, g, o blocks of rows
// [4H] of z.
static void cg_lstm_act(float *z, long rows, long h) {
	for (long r = 0; r < rows; r++) {
		float *zr = z + r * 4 * h;
		cg_sigmoid(zr, 2 * h);
		cg_tanh(zr + 2 * h, h);
		cg_sigmoid(zr + 3 * h, h);
	}
}
*/
import "C"

import "unsafe"

// vecMin is the length below which a cgo call costs more than it saves.
const vecMin = 32

// SigmoidSlice sets x[i] = 1/(1+e^(−x[i])).
func SigmoidSlice(x []float32) {
	if len(x) < vecMin {
		sigmoidGo(x)
		return
	}
	C.cg_sigmoid((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)))
}

// TanhSlice sets x[i] = tanh(x[i]).
func TanhSlice(x []float32) {
	if len(x) < vecMin {
		tanhGo(x)
		return
	}
	C.cg_tanh((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)))
}

// LSTMGates applies the gate nonlinearities σ, σ, tanh, σ to the i, f, g,
// o blocks of each row of z [N, 4H] in place.
func LSTMGates(z []float32, H int) {
	if len(z) == 0 {
		return
	}
	C.cg_lstm_act((*C.float)(unsafe.Pointer(&z[0])), C.long(len(z)/(4*H)), C.long(H))
}

// GELU sets y[i] = GELU(x[i]) for i < len(y); x may alias y.
func GELU(x, y []float32) {
	if len(y) < vecMin {
		geluGo(x, y)
		return
	}
	_ = x[len(y)-1]
	C.cg_gelu((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&y[0])), C.long(len(y)))
}

// GELUGrad sets dx[i] = dy[i]·GELU'(x[i]) for i < len(dx).
func GELUGrad(x, dy, dx []float32) {
	if len(dx) < vecMin {
		geluGradGo(x, dy, dx)
		return
	}
	_, _ = x[len(dx)-1], dy[len(dx)-1]
	C.cg_gelu_grad((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&dy[0])),
		(*C.float)(unsafe.Pointer(&dx[0])), C.long(len(dx)))
}

// ExpSum returns the largest value of a non-empty x and Σ e^(x_i − max),
// summed in float64 across chunks: log softmax(x)_i = x_i − max − log sum.
func ExpSum(x []float32) (mx float32, sum float64) {
	if len(x) < vecMin {
		return expSumGo(x)
	}
	var m C.float
	s := C.cg_exp_sum((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)), &m)
	return float32(m), float64(s)
}

// ExpShift sets y[i] = e^(x[i] − c) for i < len(x) (y at least as long),
// arguments below −87 taken as −87: softmax(x) = ExpShift(x, log-sum-exp).
func ExpShift(x []float32, c float32, y []float32) {
	if len(x) < vecMin {
		expShiftGo(x, c, y)
		return
	}
	_ = y[len(x)-1]
	C.cg_exp_shift((*C.float)(unsafe.Pointer(&x[0])), C.float(c), (*C.float)(unsafe.Pointer(&y[0])), C.long(len(x)))
}

// DotAxpy returns x·y and adds a·x into z (y and z at least as long as x).
// The dot product is summed in eight lanes, so it may differ from a
// sequential sum in the last bits.
func DotAxpy(x, y []float32, a float32, z []float32) float32 {
	if len(x) < vecMin {
		return dotAxpyGo(x, y, a, z)
	}
	_, _ = y[len(x)-1], z[len(x)-1]
	return float32(C.cg_dot_axpy((*C.float)(unsafe.Pointer(&x[0])), (*C.float)(unsafe.Pointer(&y[0])),
		C.float(a), (*C.float)(unsafe.Pointer(&z[0])), C.long(len(x))))
}

// ScoreBack is the backward pass of a score de-weighted v·tanh(·) given
// u = tanh(·): it adds de·u into dv and de·v·(1−u²) into dz1 and dz2.
func ScoreBack(de float32, u, v, dv, dz1, dz2 []float32) {
	n := len(u)
	if n < vecMin {
		scoreBackGo(de, u, v, dv, dz1, dz2)
		return
	}
	_, _, _, _ = v[n-1], dv[n-1], dz1[n-1], dz2[n-1]
	p := func(x []float32) *C.float { return (*C.float)(unsafe.Pointer(&x[0])) }
	C.cg_score_back(C.float(de), p(u), p(v), p(dv), p(dz1), p(dz2), C.long(n))
}
