//go:build gpuemu && !gpu

// Fiber scheduler of the kernel emulator (see emu_cuda.h).
#include <stdio.h>
#include <stdlib.h>

#include <mutex>
#include <string>
#include <vector>

#include "emu_cuda.h"
#include "emu_launch.h"

#if !defined(__x86_64__)
#error "the kernel emulator (build tag gpuemu) switches stacks in x86-64 assembly"
#endif

namespace emu {

enum Wait { RUN, AT_BLOCK, AT_WARP, DONE };

struct Fiber {
  void* sp;  // saved stack pointer while switched out
  uint3 tid;
  int linear;
  Wait wait;
  void* site;  // the __syncthreads call it waits at
  char* stack;
};

Fiber* cur;
uint3 block_idx, block_dim, grid_dim;

namespace {
const size_t kStack = 256 << 10;

// ctx_switch saves the callee-saved registers and stack pointer of the
// running context in *save and resumes the one whose stack pointer is to.
// (glibc's swapcontext also saves the signal mask, a system call per
// switch that made emulated kernels several times slower.)
extern "C" void emu_ctx_switch(void** save, void* to);
asm(R"(
.text
.globl emu_ctx_switch
.type emu_ctx_switch,@function
emu_ctx_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size emu_ctx_switch,.-emu_ctx_switch
.section .note.GNU-stack,"",@progbits
.text
)");

// With AddressSanitizer (make test-gpuemu-asan), every switch between the
// scheduler's stack and a fiber's is announced, or ASan takes the fibers'
// frames for overflows of the scheduler's stack.
#if defined(__SANITIZE_ADDRESS__)
}  // namespace
}  // namespace emu
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
namespace emu {
namespace {
const void* sched_bottom;  // the scheduler's stack, learnt on the first switch
size_t sched_size;
void* sched_fake;  // ASan's fake stack of the scheduler while a fiber runs
void* fiber_fake;  // the running fiber's, while the scheduler runs
void to_fiber(char* stack) { __sanitizer_start_switch_fiber(&sched_fake, stack, kStack); }
void in_fiber() { __sanitizer_finish_switch_fiber(fiber_fake, &sched_bottom, &sched_size); }
void to_sched(bool exiting) { __sanitizer_start_switch_fiber(exiting ? nullptr : &fiber_fake, sched_bottom, sched_size); }
void in_sched() { __sanitizer_finish_switch_fiber(sched_fake, nullptr, nullptr); }
// A reused fiber stack still carries the red zones of the frames that
// were live when its last thread finished.
void fresh_stack(char* stack) { ASAN_UNPOISON_MEMORY_REGION(stack, kStack); }
#else
void fresh_stack(char*) {}
void to_fiber(char*) {}
void in_fiber() {}
void to_sched(bool) {}
void in_sched() {}
#endif

std::mutex mu;
void* sched_sp;
std::vector<Fiber> fibers;
Thunk cur_thunk;
void** cur_params;
std::string err;
bool direct;  // running threads as plain calls (a kernel without barriers)
// hostile runs threads and blocks in reverse order and fills shared memory
// with NaN (all bits set) before each block, so kernels that read another
// thread's shared or global writes without a barrier, depend on block
// order, or read shared memory they never wrote compute something else
// than in the default order (emu_set_hostile).
bool hostile;
// One slot per lane for shuffles: 32 warps of 32 lanes, 8 bytes each.
unsigned long long xchg[32][32];

// The linker brackets the emu_shared section with these symbols.
extern "C" char __start_emu_shared[] __attribute__((weak));
extern "C" char __stop_emu_shared[] __attribute__((weak));

void poison_shared() {
  if (__start_emu_shared && __stop_emu_shared > __start_emu_shared)
    memset(__start_emu_shared, 0xff, __stop_emu_shared - __start_emu_shared);
}

void fail(const std::string& m) {
  if (err.empty()) err = m;
}

[[noreturn]] void fiber_main() {
  in_fiber();
  cur_thunk(cur_params);
  cur->wait = DONE;
  void* dead;
  to_sched(true);
  emu_ctx_switch(&dead, sched_sp);
  __builtin_unreachable();
}

// fiber_start lays out f's stack so that the first switch to it "returns"
// into fiber_main with the stack aligned as after a call.
void fiber_start(Fiber& f) {
  fresh_stack(f.stack);
  uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack) + kStack) & ~uintptr_t(15);
  void** p = reinterpret_cast<void**>(top);
  *--p = nullptr;                                     // fiber_main's return address (never used)
  *--p = reinterpret_cast<void*>(&fiber_main);        // popped by ret
  for (int i = 0; i < 6; i++) *--p = nullptr;         // rbp rbx r12-r15
  f.sp = p;
}

void yield(Wait w) {
  if (direct) {
    fail("barrier reached in a kernel listed as plain (EMU_PLAIN in emu_kernels.cc)");
    return;
  }
  Fiber* f = cur;
  f->wait = w;
  to_sched(false);
  emu_ctx_switch(&f->sp, sched_sp);
  in_fiber();
}

// run_fibers switches to every runnable fiber of [lo, hi) once, in
// reverse order on the hostile schedule.
bool run_fibers(int lo, int hi) {
  for (int k = lo; k < hi; k++) {
    int i = hostile ? hi - 1 - (k - lo) : k;
    if (fibers[i].wait != RUN) continue;
    cur = &fibers[i];
    to_fiber(cur->stack);
    emu_ctx_switch(&sched_sp, cur->sp);
    in_sched();
    if (!err.empty()) return false;
  }
  return true;
}

// release_warp lets warp w's lanes past a shuffle once all of them wait at
// one: 1 if it did, 0 if the warp is not waiting, -1 on misuse.
int release_warp(int w, int n) {
  int lo = 32 * w, hi = std::min(n, lo + 32), waiting = 0, done = 0;
  for (int i = lo; i < hi; i++) {
    waiting += fibers[i].wait == AT_WARP;
    done += fibers[i].wait == DONE;
  }
  if (waiting == 0) return 0;
  if (hi - lo < 32) return fail("warp shuffle with a full mask in a partial warp of " + std::to_string(hi - lo) + " threads"), -1;
  if (done > 0) return fail("warp shuffle with a full mask after lanes of the warp exited"), -1;
  if (waiting < hi - lo) return 0;
  for (int i = lo; i < hi; i++) fibers[i].wait = RUN;
  return 1;
}

// run_block runs every thread of the current block to completion. By
// default each pass advances every thread to its next barrier or shuffle,
// so warps move in step and a read of a lower thread's earlier write
// succeeds without a barrier. The hostile schedule runs one warp at a time,
// the last first, each up to its next __syncthreads, so such a read comes
// before the write; the default order catches reads of higher threads.
bool run_block(int n) {
  if ((int)fibers.size() < n) fibers.resize(n);
  for (int i = 0; i < n; i++) {
    Fiber& f = fibers[i];
    if (!f.stack) f.stack = static_cast<char*>(malloc(kStack));
    f.linear = i;
    f.tid = {(unsigned)(i % block_dim.x), (unsigned)(i / block_dim.x % block_dim.y),
             (unsigned)(i / (block_dim.x * block_dim.y))};
    f.wait = RUN;
    fiber_start(f);
  }
  int warps = (n + 31) / 32;
  for (;;) {
    if (hostile) {
      for (int w = warps - 1; w >= 0; w--) {
        int r;
        do {
          if (!run_fibers(32 * w, std::min(n, 32 * w + 32))) return false;
        } while ((r = release_warp(w, n)) == 1);
        if (r < 0) return false;
      }
    } else if (!run_fibers(0, n)) {
      return false;
    }
    bool released = false, all_done = true, block_ready = true;
    for (int i = 0; i < n; i++) {
      if (fibers[i].wait != DONE) all_done = false;
      if (fibers[i].wait == AT_WARP) block_ready = false;
    }
    if (all_done) return true;
    for (int w = 0; w < warps; w++) {
      int r = release_warp(w, n);
      if (r < 0) return false;
      released |= r == 1;
    }
    if (!released && block_ready) {
      void* site = nullptr;
      for (int i = 0; i < n; i++) {
        if (fibers[i].wait != AT_BLOCK) continue;
        if (site && fibers[i].site != site)
          return fail("threads wait at different __syncthreads calls (divergent barrier)"), false;
        site = fibers[i].site;
      }
      for (int i = 0; i < n; i++)
        if (fibers[i].wait == AT_BLOCK) fibers[i].wait = RUN, released = true;
    }
    if (!released) return fail("threads wait at different barriers (__syncthreads or a shuffle in divergent code)"), false;
  }
}

Fiber direct_fiber;
}  // namespace

const uint3& thread_idx() { return cur->tid; }

void misuse(const char* m) { fail(m); }

int lane_id() { return cur->linear & 31; }

// Threads that exited count as arrived, as on the GPU; threads waiting at
// another __syncthreads (told apart by the return address) are an error.
__attribute__((noinline)) void syncthreads() {
  if (cur) cur->site = __builtin_return_address(0);
  yield(AT_BLOCK);
}

void warp_exchange(const void* v, void* out, int size, unsigned mask, int src) {
  if (mask != 0xffffffffu) {
    fail("shuffle masks other than 0xffffffff are not emulated");
    return;
  }
  int w = cur->linear >> 5, lane = cur->linear & 31;
  if (w >= 32) {
    fail("more than 1024 threads in a block");
    return;
  }
  memcpy(&xchg[w][lane], v, size);
  yield(AT_WARP);
  memcpy(out, &xchg[w][src], size);
  yield(AT_WARP);  // nobody overwrites a slot before every lane has read
}

}  // namespace emu

using namespace emu;

extern "C" int emu_launch(const char* name, const char* sig, int gx, int gy, int gz, int bx, int by, int bz,
                          unsigned long long* slots, char* errbuf, int errlen) {
  std::lock_guard<std::mutex> lock(mu);
  err.clear();
  const Entry* e = emu_find(name);
  if (!e) {
    snprintf(errbuf, errlen, "kernel %s not in the emulator's table", name);
    return 1;
  }
  if (strcmp(e->sig, sig) != 0) {
    snprintf(errbuf, errlen, "kernel %s takes (%s), launched with (%s)", name, e->sig, sig);
    return 1;
  }
  long long threads = (long long)bx * by * bz;
  if (threads < 1 || threads > 1024) {
    snprintf(errbuf, errlen, "kernel %s: block of %lld threads (want 1 to 1024)", name, threads);
    return 1;
  }
  if (gy > 65535 || gz > 65535) {
    snprintf(errbuf, errlen, "kernel %s: grid %d x %d x %d exceeds 65535 in y or z", name, gx, gy, gz);
    return 1;
  }
  void* params[64];
  int np = strlen(sig);
  for (int i = 0; i < np && i < 64; i++) params[i] = &slots[i];
  cur_thunk = e->thunk;
  cur_params = params;
  grid_dim = {(unsigned)gx, (unsigned)gy, (unsigned)gz};
  block_dim = {(unsigned)bx, (unsigned)by, (unsigned)bz};
  direct = e->plain;
  long long blocks = (long long)gx * gy * gz;
  for (long long b = 0; b < blocks && err.empty(); b++) {
    long long l = hostile ? blocks - 1 - b : b;
    block_idx = {(unsigned)(l % gx), (unsigned)(l / gx % gy), (unsigned)(l / ((long long)gx * gy))};
    if (hostile) poison_shared();
    if (!direct) {
      run_block((int)threads);
      continue;
    }
    for (long long k = 0; k < threads && err.empty(); k++) {
      int i = (int)(hostile ? threads - 1 - k : k);
      direct_fiber.linear = i;
      direct_fiber.tid = {(unsigned)(i % bx), (unsigned)(i / bx % by), (unsigned)(i / (bx * by))};
      cur = &direct_fiber;
      cur_thunk(params);
    }
  }
  direct = false;
  cur = nullptr;
  if (!err.empty()) {
    snprintf(errbuf, errlen, "kernel %s: %s", name, err.c_str());
    return 1;
  }
  return 0;
}

extern "C" int emu_has(const char* name) { return emu_find(name) != nullptr; }

extern "C" void emu_set_hostile(int on) {
  std::lock_guard<std::mutex> lock(mu);
  hostile = on != 0;
}
