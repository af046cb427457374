//go:build cgo && !purego

package models

// The same sigmoid and tanh as lstm_math.go's Go loops, in C so that the
// compiler vectorises them (AVX2 and FMA where the CPU has them, chosen at
// run time). The polynomial replaces the table: e^r on |r| <= ln2/2 by
// its Taylor series through r^7 (relative error below 1e-8). Results may
// differ from the Go loops, and between CPUs with and without FMA, in the
// last bit.

/*
#cgo CFLAGS: -O3
#include <stdint.h>
#include <string.h>

// Without trapping math the clamps and sign selects become blends, which
// is what lets GCC vectorise the loops; no floating-point traps are
// enabled in a Go program anyway.
#pragma GCC optimize("no-trapping-math")

#define CG_RND 12582912.0f // 1.5·2^23: adding and subtracting it rounds to an integer

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

#define CG_KERNELS(SUF, ATTR)                                              \
	ATTR static void cg_sigmoid_##SUF(float *x, long n) {                  \
		for (long i = 0; i < n; i++) {                                     \
			float y = -x[i];                                               \
			y = y > 87.0f ? 87.0f : y;                                     \
			y = y < -87.0f ? -87.0f : y;                                   \
			float fn = (y * 1.44269504088896341f + CG_RND) - CG_RND;       \
			float r = y - fn * 0.693359375f - fn * -2.12194440e-4f;        \
			float e = (1.0f + cg_expm1_core(r)) * cg_pow2(fn);             \
			x[i] = 1.0f / (1.0f + e);                                      \
		}                                                                  \
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

func sigmoidVec(x []float32) {
	if len(x) < vecMin {
		sigmoidSlice(x)
		return
	}
	C.cg_sigmoid((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)))
}

func tanhVec(x []float32) {
	if len(x) < vecMin {
		tanhSlice(x)
		return
	}
	C.cg_tanh((*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)))
}

// lstmAct applies the gate nonlinearities to z [N, 4H] in place.
func lstmAct(z []float32, H int) {
	if len(z) == 0 {
		return
	}
	C.cg_lstm_act((*C.float)(unsafe.Pointer(&z[0])), C.long(len(z)/(4*H)), C.long(H))
}
