// Host emulation (build tag gpuemu) of the CUDA C++ subset that compbench's kernels use, so the
// kernel sources (kernels/*.cu) compile as ordinary C++ and run on the CPU
// under the build tag gpuemu. Each emulated thread is a fiber; a block runs
// its fibers round-robin (or, on the hostile schedule, warp by warp in
// reverse), and __syncthreads and warp shuffles are barriers the scheduler
// (emu_sched.cc) releases when every live participant has arrived. Blocks run one after another, so __shared__ arrays can be plain
// function-local statics.
//
// Misuse a GPU would punish with wrong results (divergent barriers, full-mask
// shuffles in a warp whose lanes have exited or do not exist, argument lists
// that do not match the kernel's parameters) is reported as a launch error.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <utility>

struct uint3 {
  unsigned x, y, z;
};
typedef uint3 dim3;

namespace emu {
struct Fiber;
extern Fiber* cur;
extern uint3 block_idx, block_dim, grid_dim;
const uint3& thread_idx();
void syncthreads();
void warp_exchange(const void* v, void* out, int size, unsigned mask, int src_lane);
int lane_id();
// misuse fails the running launch with message m (reported by emu_launch).
void misuse(const char* m);
}  // namespace emu

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
// __shared__ arrays all live in one section, so that the hostile schedule
// (emu_set_hostile) can fill them with NaN at the start of every block.
#define __shared__ static __attribute__((section("emu_shared")))
#define __align__(n) __attribute__((aligned(n)))

#define threadIdx (emu::thread_idx())
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)

inline void __syncthreads() { emu::syncthreads(); }

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  (void)width;
  T r;
  emu::warp_exchange(&v, &r, sizeof(T), mask, emu::lane_id() ^ lane_mask);
  return r;
}

template <typename T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  (void)width;
  T r;
  emu::warp_exchange(&v, &r, sizeof(T), mask, src & 31);
  return r;
}

// Blocks run one at a time, so an atomic is a plain read-modify-write.
template <typename T>
inline T atomicAdd(T* p, T v) {
  T old = *p;
  *p = old + v;
  return old;
}

inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

// CUDA's global min and max accept mixed integer types.
template <typename A, typename B>
inline auto min(A a, B b) -> typename std::common_type<A, B>::type {
  return a < b ? a : b;
}
template <typename A, typename B>
inline auto max(A a, B b) -> typename std::common_type<A, B>::type {
  return a > b ? a : b;
}

namespace emu {
// Kernel entry of the dispatch table: a thunk that unpacks parameter slots
// (pointers to the values, as cuLaunchKernel takes them) and the
// parameter type codes (p pointer, i int, u unsigned, l long long, U
// unsigned long long, f float, d double) the launcher's arguments must match.
typedef void (*Thunk)(void** params);
struct Entry {
  const char* name;
  Thunk thunk;
  const char* sig;
  bool plain;  // has no barriers: threads run as plain calls, no fibers
};

template <typename T>
constexpr char code() {
  if constexpr (std::is_pointer<T>::value) return 'p';
  else if constexpr (std::is_same<T, int>::value) return 'i';
  else if constexpr (std::is_same<T, unsigned>::value) return 'u';
  else if constexpr (std::is_same<T, long long>::value) return 'l';
  else if constexpr (std::is_same<T, unsigned long long>::value) return 'U';
  else if constexpr (std::is_same<T, float>::value) return 'f';
  else if constexpr (std::is_same<T, double>::value) return 'd';
  else return '?';
}

template <typename... A>
struct Sig {
  static constexpr char s[sizeof...(A) + 1] = {code<std::decay_t<A>>()..., 0};
};

template <typename... A>
const char* sig_of(void (*)(A...)) {
  return Sig<A...>::s;
}

template <typename... A, size_t... I>
void call(void (*f)(A...), void** p, std::index_sequence<I...>) {
  f(*static_cast<std::decay_t<A>*>(p[I])...);
}

template <typename F>
struct Arity;
template <typename... A>
struct Arity<void (*)(A...)> {
  static constexpr size_t n = sizeof...(A);
};

template <auto F>
void thunk(void** p) {
  call(F, p, std::make_index_sequence<Arity<decltype(F)>::n>{});
}

// EMU_ENTRY is a kernel with barriers (every thread a fiber); EMU_PLAIN one
// without (every thread a plain call, much faster). A barrier reached in a
// kernel listed as plain is a launch error, so a wrong listing cannot pass
// silently.
#define EMU_ENTRY(k) \
  { #k, &emu::thunk<&k>, emu::sig_of(&k), false }
#define EMU_PLAIN(k) \
  { #k, &emu::thunk<&k>, emu::sig_of(&k), true }
}  // namespace emu
