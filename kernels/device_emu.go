//go:build gpuemu && !gpu

package kernels

// #cgo CXXFLAGS: -std=c++17 -O2 -DCOMPBENCH_EMU
// #include <stdlib.h>
// #include <string.h>
// int emu_launch(const char* name, const char* sig, int gx, int gy, int gz, int bx, int by, int bz,
//                unsigned long long* slots, char* errbuf, int errlen);
// int emu_has(const char* name);
// void emu_set_hostile(int on);
import "C"

import (
	"embed"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// This file is the emulated device of the build tag gpuemu: the same
// launchers and kernel sources as the GPU build, with the kernels compiled
// as host C++ (emu_*.h, emu_*.cc) and "device memory" in C heap memory. It exists
// to test everything above the PTX (launch shapes, argument lists, kernel
// logic, the engine's CUDA backend) on a machine without a GPU; it is slow
// and says so in its name, and a binary built with it never claims a GPU.

// emuSources are the kernel sources emu_kernels.cc compiles. Embedding them
// makes the go command rebuild the emulator when a kernel changes (it does
// not track .cu files otherwise), and lets a test check that the emulator's
// table lists every kernel.
//
//go:embed *.cu *.cuh
var emuSources embed.FS

// devPtr is an address in the emulated device memory (C heap).
type devPtr = uintptr

// cptr turns an emulated device address back into a pointer. The memory is
// C heap memory, which the Go collector neither moves nor frees.
func cptr(p devPtr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// Event marks a point in the emulated stream, for timing.
type Event struct{ t time.Time }

// Device is the emulated GPU: launches run synchronously on the calling
// goroutine, one at a time.
type Device struct {
	// GemmKind selects the matrix-product kernel; the zero value is GemmAuto.
	GemmKind GemmMode

	mu      sync.Mutex
	scratch Buf
	liveCount
}

// HostileEnv names the environment variable that switches the emulator to
// its hostile schedule: with HostileEnv=1, threads and blocks run in
// reverse order and shared memory starts every block as NaN, so a kernel
// whose result depends on the order the default schedule happens to use
// (a missing barrier, a read of another block's output, shared memory read
// before it is written) computes something else and fails its parity test.
const HostileEnv = "COMPBENCH_EMU_HOSTILE"

// Open returns the emulated device; only ordinal 0 exists.
func Open(ordinal int) (*Device, error) {
	if ordinal != 0 {
		return nil, fmt.Errorf("cuda: device %d requested, the emulator has 1", ordinal)
	}
	switch v := os.Getenv(HostileEnv); v {
	case "", "0":
		setHostile(false)
	case "1":
		setHostile(true)
	default:
		return nil, fmt.Errorf("cuda (emulated): %s=%q: want 0 or 1", HostileEnv, v)
	}
	return &Device{}, nil
}

// hostile mirrors the emulator's schedule switch (see HostileEnv), which
// holds for every device of the process.
var hostile bool

// setHostile switches the schedule and returns the previous setting.
func setHostile(on bool) (was bool) {
	v := C.int(0)
	if on {
		v = 1
	}
	C.emu_set_hostile(v)
	was, hostile = hostile, on
	return was
}

// MemInfo returns the emulated device's free and total memory: the
// machine's available and total memory (MemAvailable and MemTotal of
// /proc/meminfo), since emulated device memory is host heap memory.
func MemInfo(ordinal int) (free, total int64, err error) {
	if ordinal != 0 {
		return 0, 0, fmt.Errorf("cuda: device %d requested, the emulator has 1", ordinal)
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0, fmt.Errorf("cuda (emulated): memory: %w", err)
	}
	kb := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				kb[strings.TrimSuffix(f[0], ":")] = v
			}
		}
	}
	if kb["MemTotal"] <= 0 || kb["MemAvailable"] <= 0 {
		return 0, 0, errors.New("cuda (emulated): memory: no MemTotal or MemAvailable in /proc/meminfo")
	}
	return kb["MemAvailable"] << 10, kb["MemTotal"] << 10, nil
}

// String names the device.
func (d *Device) String() string { return "emulated GPU on the CPU (build tag gpuemu, sm_80 kernels)" }

// TensorCores reports true: the emulator runs the TF32 WMMA kernel.
func (d *Device) TensorCores() bool { return true }

// Close releases the scratch memory.
func (d *Device) Close() error {
	err := d.Free(d.scratch)
	d.scratch = Buf{}
	return err
}

// AllocBytes returns a zeroed buffer of the given size.
func (d *Device) AllocBytes(bytes int64) (Buf, error) {
	p := C.calloc(C.size_t(max(bytes, 4)), 1)
	if p == nil {
		return Buf{}, fmt.Errorf("cuda: allocating %d bytes: out of memory", bytes)
	}
	d.add(1, bytes)
	return Buf{devPtr(p), bytes}, nil
}

// Free releases b (not a view made by At).
func (d *Device) Free(b Buf) error {
	if !b.IsZero() {
		C.free(cptr(b.ptr))
		d.add(-1, -b.bytes)
	}
	return nil
}

func (d *Device) copyIn(dst Buf, src unsafe.Pointer, bytes int64) error {
	if bytes > dst.bytes {
		return fmt.Errorf("cuda: upload of %d bytes into a buffer of %d", bytes, dst.bytes)
	}
	if bytes > 0 {
		C.memcpy(cptr(dst.ptr), src, C.size_t(bytes))
	}
	return nil
}

func (d *Device) copyOut(dst unsafe.Pointer, src Buf, bytes int64) error {
	if bytes > src.bytes {
		return fmt.Errorf("cuda: download of %d bytes from a buffer of %d", bytes, src.bytes)
	}
	if bytes > 0 {
		C.memcpy(dst, cptr(src.ptr), C.size_t(bytes))
	}
	return nil
}

// words views n 32-bit words of b.
func words(b Buf, n int) []uint32 { return unsafe.Slice((*uint32)(cptr(b.ptr)), n) }

// Zero clears the first n 4-byte elements of b.
func (d *Device) Zero(b Buf, n int) error { return d.fill(b, n, 0) }

// fill sets the first n float32 elements of b to v.
func (d *Device) fill(b Buf, n int, v float32) error {
	if int64(n)*4 > b.bytes {
		return fmt.Errorf("cuda: filling %d elements of a buffer of %d", n, b.Len())
	}
	w := words(b, n)
	for i := range w {
		w[i] = math.Float32bits(v)
	}
	return nil
}

// Copy copies n 4-byte elements from src to dst.
func (d *Device) Copy(dst, src Buf, n int) error {
	if int64(n)*4 > dst.bytes || int64(n)*4 > src.bytes {
		return fmt.Errorf("cuda: copying %d elements between buffers of %d and %d", n, src.Len(), dst.Len())
	}
	if n > 0 {
		C.memmove(cptr(dst.ptr), cptr(src.ptr), C.size_t(n*4))
	}
	return nil
}

// Sync returns at once: emulated launches are synchronous.
func (d *Device) Sync() error { return nil }

// Record returns an event at the current time.
func (d *Device) Record() (Event, error) { return Event{time.Now()}, nil }

// Elapsed returns the milliseconds between two events.
func (d *Device) Elapsed(start, end Event) (float64, error) {
	return float64(end.t.Sub(start.t).Microseconds()) / 1e3, nil
}

// launch runs kernel name over the grid on the CPU.
func (d *Device) launch(name string, grid, block dim3, shared int, args ...any) error {
	for _, g := range grid {
		if g <= 0 {
			return nil // empty problem
		}
	}
	if shared != 0 {
		return fmt.Errorf("cuda: %s: dynamic shared memory is not emulated", name)
	}
	slots, sig, err := packArgs(name, args)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cname, csig := C.CString(name), C.CString(sig)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(csig))
	cslots := (*C.ulonglong)(C.malloc(C.size_t(8 * max(1, len(slots)))))
	defer C.free(unsafe.Pointer(cslots))
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(cslots)), len(slots)), slots)
	var msg [512]C.char
	if C.emu_launch(cname, csig, C.int(grid[0]), C.int(grid[1]), C.int(grid[2]),
		C.int(block[0]), C.int(block[1]), C.int(block[2]), cslots, &msg[0], C.int(len(msg))) != 0 {
		return fmt.Errorf("cuda (emulated): %s", C.GoString(&msg[0]))
	}
	return nil
}

// fn checks that kernel name is in the emulator's table.
func (d *Device) fn(name string) (string, error) {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	if C.emu_has(c) == 0 {
		return "", fmt.Errorf("cuda: kernel %s not in the emulator's table", name)
	}
	return name, nil
}
