//go:build gpu

package cudrv

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Handles (CUcontext, CUstream, CUmodule, CUfunction, CUevent) are
// pointers, passed as uintptr_t; CUdeviceptr is unsigned long long on
// 64-bit platforms; CUdevice is int; CUresult is an int enum.
typedef int (*cd_u_fn)(unsigned);
typedef int (*cd_pint_fn)(int*);
typedef int (*cd_get_dev_fn)(int*, int);
typedef int (*cd_name_fn)(char*, int, int);
typedef int (*cd_attr_fn)(int*, int, int);
typedef int (*cd_retain_fn)(void**, int);
typedef int (*cd_dev_fn)(int);
typedef int (*cd_handle_fn)(void*);
typedef int (*cd_create_fn)(void**, unsigned);
typedef int (*cd_load_fn)(void**, const void*);
typedef int (*cd_getfn_fn)(void**, void*, const char*);
typedef int (*cd_launch_fn)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	unsigned, void*, void**, void**);
typedef int (*cd_alloc_fn)(unsigned long long*, size_t);
typedef int (*cd_free_fn)(unsigned long long);
typedef int (*cd_memset8_fn)(unsigned long long, unsigned char, size_t, void*);
typedef int (*cd_memset32_fn)(unsigned long long, unsigned, size_t, void*);
typedef int (*cd_htod_fn)(unsigned long long, const void*, size_t);
typedef int (*cd_dtoh_fn)(void*, unsigned long long, size_t);
typedef int (*cd_dtod_fn)(unsigned long long, unsigned long long, size_t, void*);
typedef int (*cd_record_fn)(void*, void*);
typedef int (*cd_elapsed_fn)(float*, void*, void*);
typedef int (*cd_errname_fn)(int, const char**);

// cd_open returns dlopen's handle, or NULL with dlerror's text in err
// (dlerror is per thread, so it is read here, on the calling thread).
static void* cd_open(const char* name, char* err, int errlen) {
	void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char* e = dlerror();
		strncpy(err, e ? e : "unknown dlopen error", errlen - 1);
		err[errlen - 1] = 0;
	}
	return h;
}
static void* cd_sym(void* lib, const char* name) { return dlsym(lib, name); }

static int cd_u(void* f, unsigned v) { return ((cd_u_fn)f)(v); }
static int cd_pint(void* f, int* v) { return ((cd_pint_fn)f)(v); }
static int cd_get_dev(void* f, int* dev, int ord) { return ((cd_get_dev_fn)f)(dev, ord); }
static int cd_name(void* f, char* buf, int len, int dev) { return ((cd_name_fn)f)(buf, len, dev); }
static int cd_attr(void* f, int* v, int attr, int dev) { return ((cd_attr_fn)f)(v, attr, dev); }
static int cd_retain(void* f, uintptr_t* out, int dev) {
	void* h = 0;
	int r = ((cd_retain_fn)f)(&h, dev);
	*out = (uintptr_t)h;
	return r;
}
static int cd_dev(void* f, int dev) { return ((cd_dev_fn)f)(dev); }
static int cd_handle(void* f, uintptr_t h) { return ((cd_handle_fn)f)((void*)h); }
static int cd_create(void* f, uintptr_t* out, unsigned flags) {
	void* h = 0;
	int r = ((cd_create_fn)f)(&h, flags);
	*out = (uintptr_t)h;
	return r;
}
static int cd_load(void* f, uintptr_t* out, const char* image) {
	void* h = 0;
	int r = ((cd_load_fn)f)(&h, image);
	*out = (uintptr_t)h;
	return r;
}
static int cd_getfn(void* f, uintptr_t* out, uintptr_t mod, const char* name) {
	void* h = 0;
	int r = ((cd_getfn_fn)f)(&h, (void*)mod, name);
	*out = (uintptr_t)h;
	return r;
}

// cd_launch passes each of the n argument slots by address, as
// cuLaunchKernel's kernelParams wants; the driver copies the values
// before it returns. A kernel reads as many bytes of a slot as its
// parameter has, the low ones on a little-endian host.
#define CD_MAX_ARGS 64
static int cd_launch(void* f, uintptr_t fn, unsigned gx, unsigned gy, unsigned gz,
	unsigned bx, unsigned by, unsigned bz, unsigned shared, uintptr_t stream,
	const uint64_t* args, int n) {
	uint64_t vals[CD_MAX_ARGS];
	void* ptrs[CD_MAX_ARGS];
	if (n > CD_MAX_ARGS) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < n; i++) {
		vals[i] = args[i];
		ptrs[i] = &vals[i];
	}
	return ((cd_launch_fn)f)((void*)fn, gx, gy, gz, bx, by, bz, shared, (void*)stream, ptrs, 0);
}
static int cd_alloc(void* f, unsigned long long* out, size_t bytes) { return ((cd_alloc_fn)f)(out, bytes); }
static int cd_free(void* f, unsigned long long p) { return ((cd_free_fn)f)(p); }
static int cd_memset8(void* f, unsigned long long p, unsigned char v, size_t n, uintptr_t s) {
	return ((cd_memset8_fn)f)(p, v, n, (void*)s);
}
static int cd_memset32(void* f, unsigned long long p, unsigned v, size_t n, uintptr_t s) {
	return ((cd_memset32_fn)f)(p, v, n, (void*)s);
}
static int cd_htod(void* f, unsigned long long dst, const void* src, size_t n) { return ((cd_htod_fn)f)(dst, src, n); }
static int cd_dtoh(void* f, void* dst, unsigned long long src, size_t n) { return ((cd_dtoh_fn)f)(dst, src, n); }
static int cd_dtod(void* f, unsigned long long dst, unsigned long long src, size_t n, uintptr_t s) {
	return ((cd_dtod_fn)f)(dst, src, n, (void*)s);
}
static int cd_record(void* f, uintptr_t ev, uintptr_t s) { return ((cd_record_fn)f)((void*)ev, (void*)s); }
static int cd_elapsed(void* f, float* ms, uintptr_t a, uintptr_t b) { return ((cd_elapsed_fn)f)(ms, (void*)a, (void*)b); }
static const char* cd_errname(void* f, int r) {
	const char* s = 0;
	if (((cd_errname_fn)f)(r, &s) != 0) return 0;
	return s;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Handles of the driver's objects; zero is none.
type (
	// Device is a CUdevice, a GPU's ordinal as the driver numbers it.
	Device int32
	// Context is a CUcontext.
	Context uintptr
	// Stream is a CUstream.
	Stream uintptr
	// Module is a CUmodule.
	Module uintptr
	// Function is a CUfunction.
	Function uintptr
	// Event is a CUevent.
	Event uintptr
	// DevicePtr is a CUdeviceptr, an address in device memory.
	DevicePtr uintptr
)

// maxArgs is the most kernel parameters Launch passes.
const maxArgs = C.CD_MAX_ARGS

// Constants of cuda.h.
const (
	streamNonBlocking       = 0x1 // CU_STREAM_NON_BLOCKING
	eventDefault            = 0x0 // CU_EVENT_DEFAULT
	attrComputeCapabilityMj = 75  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	attrComputeCapabilityMn = 76  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

// lib is the driver's soname, which every NVIDIA driver installs.
const lib = "libcuda.so.1"

// Error is a CUresult other than CUDA_SUCCESS.
type Error struct {
	Code int
	Name string // CUDA_ERROR_..., empty when the driver does not name it
}

func (e *Error) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("CUresult %d", e.Code)
	}
	return fmt.Sprintf("%s (%d)", e.Name, e.Code)
}

// driver holds the entry points of the loaded library.
type driver struct {
	cuInit, deviceCount, deviceGet                         unsafe.Pointer
	deviceName, deviceAttr, ctxRetain, ctxRelease          unsafe.Pointer
	ctxSetCurrent, streamCreate, streamDestroy, streamSync unsafe.Pointer
	moduleLoad, moduleUnload, moduleGetFunction, launch    unsafe.Pointer
	memAlloc, memFree, memsetD8Async, memsetD32Async       unsafe.Pointer
	memcpyHtoD, memcpyDtoH, memcpyDtoDAsync                unsafe.Pointer
	eventCreate, eventRecord, eventSync, eventElapsed      unsafe.Pointer
	eventDestroy, errorName                                unsafe.Pointer
}

var (
	initOnce sync.Once
	drv      *driver
	initErr  error
)

// Init loads the driver library and initialises CUDA, once per process;
// later calls return the first call's result. Every other function of
// the package needs a successful Init.
func Init() error {
	initOnce.Do(func() { drv, initErr = load(lib) })
	return initErr
}

func load(name string) (*driver, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var ebuf [512]C.char
	h := C.cd_open(cname, &ebuf[0], C.int(len(ebuf)))
	if h == nil {
		return nil, fmt.Errorf("%s", C.GoString(&ebuf[0]))
	}
	sym := func(s string) unsafe.Pointer {
		cs := C.CString(s)
		defer C.free(unsafe.Pointer(cs))
		return C.cd_sym(h, cs)
	}
	d := &driver{}
	// cuDevicePrimaryCtxRelease_v2 appeared in CUDA 11; older drivers
	// have only the first version, with the same arguments.
	if d.ctxRelease = sym("cuDevicePrimaryCtxRelease_v2"); d.ctxRelease == nil {
		d.ctxRelease = sym("cuDevicePrimaryCtxRelease")
	}
	for _, f := range []struct {
		s string
		p *unsafe.Pointer
	}{
		{"cuInit", &d.cuInit},
		{"cuDeviceGetCount", &d.deviceCount}, {"cuDeviceGet", &d.deviceGet},
		{"cuDeviceGetName", &d.deviceName}, {"cuDeviceGetAttribute", &d.deviceAttr},
		{"cuDevicePrimaryCtxRetain", &d.ctxRetain}, {"cuDevicePrimaryCtxRelease", &d.ctxRelease},
		{"cuCtxSetCurrent", &d.ctxSetCurrent},
		{"cuStreamCreate", &d.streamCreate}, {"cuStreamDestroy_v2", &d.streamDestroy},
		{"cuStreamSynchronize", &d.streamSync},
		{"cuModuleLoadData", &d.moduleLoad}, {"cuModuleUnload", &d.moduleUnload},
		{"cuModuleGetFunction", &d.moduleGetFunction}, {"cuLaunchKernel", &d.launch},
		{"cuMemAlloc_v2", &d.memAlloc}, {"cuMemFree_v2", &d.memFree},
		{"cuMemsetD8Async", &d.memsetD8Async}, {"cuMemsetD32Async", &d.memsetD32Async},
		{"cuMemcpyHtoD_v2", &d.memcpyHtoD}, {"cuMemcpyDtoH_v2", &d.memcpyDtoH},
		{"cuMemcpyDtoDAsync_v2", &d.memcpyDtoDAsync},
		{"cuEventCreate", &d.eventCreate}, {"cuEventRecord", &d.eventRecord},
		{"cuEventSynchronize", &d.eventSync}, {"cuEventElapsedTime", &d.eventElapsed},
		{"cuEventDestroy_v2", &d.eventDestroy}, {"cuGetErrorName", &d.errorName},
	} {
		if *f.p == nil {
			if *f.p = sym(f.s); *f.p == nil {
				return nil, fmt.Errorf("%s: no symbol %s (driver too old)", name, f.s)
			}
		}
	}
	// The library stays open for the life of the process, as the driver
	// must once initialised.
	if r := C.cd_u(d.cuInit, 0); r != 0 {
		return nil, fmt.Errorf("%s: cuInit: %w", name, d.err(r))
	}
	return d, nil
}

// err turns a CUresult into nil or an *Error.
func (d *driver) err(r C.int) error {
	if r == 0 {
		return nil
	}
	e := &Error{Code: int(r)}
	if d.errorName != nil {
		if s := C.cd_errname(d.errorName, r); s != nil {
			e.Name = C.GoString(s)
		}
	}
	return e
}

// NumDevices counts the GPUs the driver sees; it calls Init.
func NumDevices() (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var n C.int
	if err := drv.err(C.cd_pint(drv.deviceCount, &n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// GetDevice returns GPU ordinal.
func GetDevice(ordinal int) (Device, error) {
	var d C.int
	err := drv.err(C.cd_get_dev(drv.deviceGet, &d, C.int(ordinal)))
	return Device(d), err
}

// Name is the GPU's product name.
func (d Device) Name() (string, error) {
	var buf [256]C.char
	if err := drv.err(C.cd_name(drv.deviceName, &buf[0], C.int(len(buf)), C.int(d))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// ComputeCapability returns the GPU's major and minor compute capability.
func (d Device) ComputeCapability() (major, minor int, err error) {
	var mj, mn C.int
	if err = drv.err(C.cd_attr(drv.deviceAttr, &mj, attrComputeCapabilityMj, C.int(d))); err != nil {
		return 0, 0, err
	}
	if err = drv.err(C.cd_attr(drv.deviceAttr, &mn, attrComputeCapabilityMn, C.int(d))); err != nil {
		return 0, 0, err
	}
	return int(mj), int(mn), nil
}

// RetainPrimaryCtx retains the GPU's primary context.
func (d Device) RetainPrimaryCtx() (Context, error) {
	var c C.uintptr_t
	err := drv.err(C.cd_retain(drv.ctxRetain, &c, C.int(d)))
	return Context(c), err
}

// ReleasePrimaryCtx releases what RetainPrimaryCtx retained.
func (d Device) ReleasePrimaryCtx() error { return drv.err(C.cd_dev(drv.ctxRelease, C.int(d))) }

// SetCurrentContext binds c to the calling OS thread.
func SetCurrentContext(c Context) error {
	return drv.err(C.cd_handle(drv.ctxSetCurrent, C.uintptr_t(c)))
}

// MakeStream creates a stream that does not synchronise with stream 0,
// in the current context.
func MakeStream() (Stream, error) {
	var s C.uintptr_t
	err := drv.err(C.cd_create(drv.streamCreate, &s, streamNonBlocking))
	return Stream(s), err
}

// Destroy releases the stream once its work is done.
func (s Stream) Destroy() error { return drv.err(C.cd_handle(drv.streamDestroy, C.uintptr_t(s))) }

// Synchronize waits for the stream's work and reports a failed kernel.
func (s Stream) Synchronize() error { return drv.err(C.cd_handle(drv.streamSync, C.uintptr_t(s))) }

// LoadData loads a module from a PTX (or cubin) image into the current
// context; the driver JIT-compiles PTX for the GPU.
func LoadData(image string) (Module, error) {
	cimg := C.CString(image) // NUL-terminated, as a PTX image must be
	defer C.free(unsafe.Pointer(cimg))
	var m C.uintptr_t
	err := drv.err(C.cd_load(drv.moduleLoad, &m, cimg))
	return Module(m), err
}

// Unload releases the module.
func (m Module) Unload() error { return drv.err(C.cd_handle(drv.moduleUnload, C.uintptr_t(m))) }

// Function looks up the module's kernel name.
func (m Module) Function(name string) (Function, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var f C.uintptr_t
	err := drv.err(C.cd_getfn(drv.moduleGetFunction, &f, C.uintptr_t(m), cname))
	return Function(f), err
}

// Launch queues the kernel on s; each of args is one parameter's bytes in
// the low end of a 64-bit slot.
func (f Function) Launch(gx, gy, gz, bx, by, bz, shared int, s Stream, args []uint64) error {
	if len(args) > maxArgs {
		return fmt.Errorf("cuLaunchKernel: %d arguments, at most %d", len(args), maxArgs)
	}
	var p *C.uint64_t
	if len(args) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return drv.err(C.cd_launch(drv.launch, C.uintptr_t(f), C.uint(gx), C.uint(gy), C.uint(gz),
		C.uint(bx), C.uint(by), C.uint(bz), C.uint(shared), C.uintptr_t(s), p, C.int(len(args))))
}

// MemAlloc allocates bytes of device memory in the current context.
func MemAlloc(bytes int64) (DevicePtr, error) {
	var p C.ulonglong
	err := drv.err(C.cd_alloc(drv.memAlloc, &p, C.size_t(bytes)))
	return DevicePtr(p), err
}

// MemFree releases what MemAlloc allocated.
func MemFree(p DevicePtr) error { return drv.err(C.cd_free(drv.memFree, C.ulonglong(p))) }

// MemsetD8Async sets n bytes at p to v on s.
func MemsetD8Async(p DevicePtr, v uint8, n int64, s Stream) error {
	return drv.err(C.cd_memset8(drv.memsetD8Async, C.ulonglong(p), C.uchar(v), C.size_t(n), C.uintptr_t(s)))
}

// MemsetD32Async sets n 4-byte words at p to v on s.
func MemsetD32Async(p DevicePtr, v uint32, n int64, s Stream) error {
	return drv.err(C.cd_memset32(drv.memsetD32Async, C.ulonglong(p), C.uint(v), C.size_t(n), C.uintptr_t(s)))
}

// MemcpyHtoD copies bytes from host memory src, which holds no Go
// pointers, to dst; it returns when the copy is done.
func MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, bytes int64) error {
	return drv.err(C.cd_htod(drv.memcpyHtoD, C.ulonglong(dst), src, C.size_t(bytes)))
}

// MemcpyDtoH copies bytes from src to host memory dst, which holds no Go
// pointers; it returns when the copy is done.
func MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, bytes int64) error {
	return drv.err(C.cd_dtoh(drv.memcpyDtoH, dst, C.ulonglong(src), C.size_t(bytes)))
}

// MemcpyDtoDAsync queues a copy of bytes from src to dst on s.
func MemcpyDtoDAsync(dst, src DevicePtr, bytes int64, s Stream) error {
	return drv.err(C.cd_dtod(drv.memcpyDtoDAsync, C.ulonglong(dst), C.ulonglong(src), C.size_t(bytes), C.uintptr_t(s)))
}

// MakeEvent creates a timing event in the current context.
func MakeEvent() (Event, error) {
	var e C.uintptr_t
	err := drv.err(C.cd_create(drv.eventCreate, &e, eventDefault))
	return Event(e), err
}

// Record marks the current end of s.
func (e Event) Record(s Stream) error {
	return drv.err(C.cd_record(drv.eventRecord, C.uintptr_t(e), C.uintptr_t(s)))
}

// Synchronize waits until the event has happened.
func (e Event) Synchronize() error { return drv.err(C.cd_handle(drv.eventSync, C.uintptr_t(e))) }

// Elapsed returns the milliseconds from e to end.
func (e Event) Elapsed(end Event) (float64, error) {
	var ms C.float
	err := drv.err(C.cd_elapsed(drv.eventElapsed, &ms, C.uintptr_t(e), C.uintptr_t(end)))
	return float64(ms), err
}

// Destroy releases the event.
func (e Event) Destroy() error { return drv.err(C.cd_handle(drv.eventDestroy, C.uintptr_t(e))) }
