//go:build gpu

// The CUDA driver, opened at run time. gorgonia.org/cu links the driver
// API (-lcuda), which would make libcuda.so.1 a load-time dependency: a
// binary built with -tags gpu could not even start on a node without the
// NVIDIA driver, --device cpu or not. This file defines every driver
// function the build calls (symbols_cuda.h, generated) as a jump through
// cg_table, which cg_load fills from libcuda.so.1 with dlopen before any
// other package's init runs. The definitions in the executable satisfy the
// linker, and -Wl,--as-needed (guard_cuda.go) then drops libcuda from the
// binary's dependencies.

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include "symbols_cuda.h"

__attribute__((visibility("hidden"))) void *cg_table[CG_NSYMBOLS];

// Each driver function is a tail jump through its table slot, so it needs
// no prototype: arguments and the CUresult pass through untouched.
#if defined(__x86_64__)
#define CG_TRAMPOLINE(i, name)                                       \
	__asm__(".text\n.globl " #name "\n.type " #name ", @function\n" #name \
	        ":\n\tjmp *cg_table+" #i "*8(%rip)\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
// x16 is the intra-procedure-call scratch register the AAPCS64 leaves to
// veneers like this one.
#define CG_TRAMPOLINE(i, name)                                                 \
	__asm__(".text\n.globl " #name "\n.type " #name ", %function\n" #name    \
	        ":\n\tadrp x16, cg_table+" #i "*8\n\tldr x16, [x16, #:lo12:cg_table+" #i \
	        "*8]\n\tbr x16\n.size " #name ", .-" #name "\n");
#else
#error "kernels/cudaguard: the driver trampolines are written for x86-64 and arm64 only"
#endif
CG_SYMBOLS(CG_TRAMPOLINE)

#define CG_NAME(i, name) #name,
static const char *const cg_names[CG_NSYMBOLS] = {CG_SYMBOLS(CG_NAME)};

// cg_unloaded fills the slots the driver lacks (or all of them when
// libcuda.so.1 is absent): any call reports an uninitialised driver
// instead of jumping to address 0.
static CUresult cg_unloaded(void) { return CUDA_ERROR_NOT_INITIALIZED; }

static CUresult (*cg_real_init)(unsigned int);
static CUresult cg_status = CUDA_ERROR_NOT_INITIALIZED;

// cuInit is the one driver function defined here rather than forwarded.
// gorgonia.org/cu calls it from its package init and exits the process when
// it fails; the guard has already called the real one (cg_load) and keeps
// its error for kernels.Open, so a failed driver reads as success here and
// a CPU run can start. Every other call still reaches the real driver (or
// cg_unloaded), which refuses work until cuInit has succeeded.
CUresult CUDAAPI cuInit(unsigned int flags) {
	if (cg_status != CUDA_SUCCESS) return CUDA_SUCCESS;
	return cg_real_init(flags);
}

// cg_load opens the driver library lib (libcuda.so.1 unless
// COMPBENCH_LIBCUDA names another), fills the table and calls the real
// cuInit(0). It returns cuInit's result, or -1 with the reason in msg when
// the library or its cuInit cannot be found.
int cg_load(const char *lib, char *msg, int n) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	for (int i = 0; i < CG_NSYMBOLS; i++) {
		void *p = h ? dlsym(h, cg_names[i]) : NULL;
		cg_table[i] = p ? p : (void *)cg_unloaded;
	}
	if (!h) {
		const char *e = dlerror();
		snprintf(msg, n, "%s", e ? e : "the driver library cannot be opened");
		return -1;
	}
	cg_real_init = (CUresult(*)(unsigned int))dlsym(h, "cuInit");
	if (!cg_real_init) {
		snprintf(msg, n, "%s has no cuInit", lib);
		return -1;
	}
	cg_status = cg_real_init(0);
	return (int)cg_status;
}

// cg_error_name names a CUresult, or returns NULL when the driver cannot.
const char *cg_error_name(int r) {
	const char *s = NULL;
	if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS) return NULL;
	return s;
}
