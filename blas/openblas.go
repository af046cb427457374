//go:build cgo && !purego

package blas

/*
#cgo LDFLAGS: -lopenblas -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void openblas_set_num_threads(int);

// cg_spin restarts OpenBLAS's worker threads with OPENBLAS_THREAD_TIMEOUT
// set to t (their spin is 2^t cycles), unless the user set it (OpenBLAS
// reads an empty value as unset, and so does this). OpenBLAS
// reads the variable once, when the library loads and starts its threads,
// before any Go code runs; so the environment is re-read and the threads
// are shut down and started again. The three functions are looked up at
// run time: builds without them (OpenMP's, other BLAS libraries) are left
// alone. Returns the timeout in effect, or -1 when it could not be read.
static int cg_spin(int t) {
	int (*timeout)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_thread_timeout");
	void (*read_env)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "openblas_read_env");
	int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_init");
	int (*shutdown)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
	if (!timeout) return -1;
	const char *user = getenv("OPENBLAS_THREAD_TIMEOUT");
	if ((user && *user) || !read_env || !init || !shutdown) return timeout();
	char buf[16];
	snprintf(buf, sizeof buf, "%d", t);
	setenv("OPENBLAS_THREAD_TIMEOUT", buf, 1);
	read_env();
	unsetenv("OPENBLAS_THREAD_TIMEOUT");
	shutdown();
	init();
	return timeout();
}
*/
import "C"

import (
	"sync"

	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// Name names the BLAS that Use installs.
const Name = "openblas"

// spinTimeout is log2 of the cycles an idle OpenBLAS worker spins before
// it sleeps. OpenBLAS's default, 28 (about 0.1 s), keeps its workers
// spinning through the Go code between products, where they take cores
// from the Go ops' own goroutines. On 2 cores, in a sweep of 4, 12, 16 and
// 20, 16 was about the best for both the Transformer and the LSTM step;
// against 28, three alternating runs of the paper-size Transformer step
// took 480-554 ms against 520-608 (CPU time 25% less), see BENCHMARKS.md.
const spinTimeout = 16

var spin struct {
	once    sync.Once
	timeout int
}

// Use makes OpenBLAS Gorgonia's and gorgonia/tensor's BLAS, and shortens
// its idle workers' spin (spinTimeout) unless OPENBLAS_THREAD_TIMEOUT is
// set. Call it once before building graphs; calling it again is harmless.
func Use() {
	G.Use(netlib.Implementation{})
	spin.once.Do(func() { spin.timeout = int(C.cg_spin(spinTimeout)) })
}

// SpinTimeout returns OpenBLAS's worker spin timeout (log2 cycles; 0: its
// built-in default) as Use left it, or -1 when this OpenBLAS does not say.
func SpinTimeout() int {
	Use()
	return spin.timeout
}

// SetThreads sets how many threads OpenBLAS uses for one product (its
// default is one per core, or OPENBLAS_NUM_THREADS). On a machine shared with
// other work, 1 avoids OpenBLAS threads spinning against each other.
func SetThreads(n int) {
	if n > 0 {
		C.openblas_set_num_threads(C.int(n))
	}
}
