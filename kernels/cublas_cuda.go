//go:build gpu

package kernels

// cuBLAS is opened with dlopen on first use (as the driver is, by
// kernels/cudaguard), so the binary starts on machines with any (or no)
// cuBLAS.
// No cuBLAS header is used: the prototypes below and these enum values
// are cuBLAS's stable C ABI, taken from cublas_api.h and library_types.h
// (CUDA 11.x, identical in 12.x and 13.x) and the cuBLAS documentation
// (docs.nvidia.com/cuda/cublas, sections "cublasOperation_t",
// "cublasMath_t", "cublasComputeType_t", "cublasGemmAlgo_t",
// "cudaDataType_t", "cublasStatus_t"):
//
//	CUBLAS_OP_N = 0, CUBLAS_OP_T = 1
//	CUDA_R_32F = 0
//	CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3
//	CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77
//	CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99
//	CUBLAS_STATUS_SUCCESS = 0
//	libraryPropertyType MAJOR_VERSION = 0, MINOR_VERSION = 1, PATCH_LEVEL = 2
//
// cublasComputeType_t replaced cudaDataType as GemmEx's compute argument
// in cuBLAS 11, so older libraries are refused.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cb_create_fn)(void**);
typedef int (*cb_destroy_fn)(void*);
typedef int (*cb_set_stream_fn)(void*, void*);
typedef int (*cb_set_math_fn)(void*, int);
typedef int (*cb_get_property_fn)(int, int*);
typedef const char* (*cb_status_string_fn)(int);
typedef int (*cb_gemm_fn)(void* handle, int transa, int transb, int m, int n, int k,
	const void* alpha, const void* A, int atype, int lda, long long strideA,
	const void* B, int btype, int ldb, long long strideB,
	const void* beta, void* C, int ctype, int ldc, long long strideC,
	int batchCount, int computeType, int algo);

// cb_open returns dlopen's handle, or NULL with dlerror's text in err
// (dlerror is per thread, so it is read here, on the calling thread).
static void* cb_open(const char* name, char* err, int errlen) {
	void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char* e = dlerror();
		strncpy(err, e ? e : "unknown dlopen error", errlen - 1);
		err[errlen - 1] = 0;
	}
	return h;
}
static void* cb_sym(void* lib, const char* name) { return dlsym(lib, name); }
static void cb_close(void* lib) { dlclose(lib); }

static int cb_create(void* f, uintptr_t* out) {
	void* h = 0;
	int s = ((cb_create_fn)f)(&h);
	*out = (uintptr_t)h;
	return s;
}
static int cb_destroy(void* f, uintptr_t h) { return ((cb_destroy_fn)f)((void*)h); }
static int cb_set_stream(void* f, uintptr_t h, uintptr_t s) { return ((cb_set_stream_fn)f)((void*)h, (void*)s); }
static int cb_set_math(void* f, uintptr_t h, int mode) { return ((cb_set_math_fn)f)((void*)h, mode); }
static int cb_get_property(void* f, int type, int* v) { return ((cb_get_property_fn)f)(type, v); }
static const char* cb_status_string(void* f, int s) { return ((cb_status_string_fn)f)(s); }

// cb_gemm calls cublasGemmStridedBatchedEx on float32 operands with host
// scalars (the handle's default pointer mode).
static int cb_gemm(void* f, uintptr_t h, int ta, int tb, int m, int n, int k, float alpha,
	uintptr_t A, int lda, long long sA, uintptr_t B, int ldb, long long sB,
	float beta, uintptr_t C, int ldc, long long sC, int batch, int compute) {
	return ((cb_gemm_fn)f)((void*)h, ta, tb, m, n, k, &alpha,
		(const void*)A, 0, lda, sA, (const void*)B, 0, ldb, sB,
		&beta, (void*)C, 0, ldc, sC, batch, compute, 99);
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Enum values (see the file comment for their source).
const (
	cublasOpN                = 0
	cublasOpT                = 1
	cublasDefaultMath        = 0
	cublasTF32TensorOpMath   = 3
	cublasCompute32F         = 68
	cublasCompute32FFastTF32 = 77
)

// cublasLibs are the sonames tried, newest first; the unversioned name
// finds a toolkit's development link.
var cublasLibs = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// cublasLib is the loaded library: its name, version and entry points.
type cublasLib struct {
	name                                string
	major, minor, patch                 int
	create, destroy, setStream, setMath unsafe.Pointer
	gemm                                unsafe.Pointer
	statusString                        unsafe.Pointer // nil before cuBLAS 11.4
}

var (
	cublasOnce sync.Once
	cublasL    *cublasLib
	cublasErr  error
)

// LoadCublas loads cuBLAS once per process and returns its soname and
// version ("libcublas.so.12 12.4.5"), or an error naming every file tried
// and why each failed.
func LoadCublas() (string, error) {
	cublasOnce.Do(func() { cublasL, cublasErr = openCublas() })
	if cublasErr != nil {
		return "", cublasErr
	}
	return fmt.Sprintf("%s %d.%d.%d", cublasL.name, cublasL.major, cublasL.minor, cublasL.patch), nil
}

func openCublas() (*cublasLib, error) {
	var why []string
	for _, name := range cublasLibs {
		l, err := openCublasFile(name)
		if err == nil {
			return l, nil
		}
		why = append(why, err.Error())
	}
	return nil, fmt.Errorf("cuBLAS: cannot load libcublas (tried %s): %s",
		strings.Join(cublasLibs, ", "), strings.Join(why, "; "))
}

func openCublasFile(name string) (*cublasLib, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var ebuf [512]C.char
	h := C.cb_open(cname, &ebuf[0], C.int(len(ebuf)))
	if h == nil {
		return nil, fmt.Errorf("%s", C.GoString(&ebuf[0]))
	}
	l := &cublasLib{name: name}
	sym := func(s string) unsafe.Pointer {
		cs := C.CString(s)
		defer C.free(unsafe.Pointer(cs))
		return C.cb_sym(h, cs)
	}
	prop := sym("cublasGetProperty")
	for _, f := range []struct {
		s string
		p *unsafe.Pointer
	}{
		{"cublasCreate_v2", &l.create}, {"cublasDestroy_v2", &l.destroy},
		{"cublasSetStream_v2", &l.setStream}, {"cublasSetMathMode", &l.setMath},
		{"cublasGemmStridedBatchedEx", &l.gemm},
	} {
		if *f.p = sym(f.s); *f.p == nil {
			C.cb_close(h)
			return nil, fmt.Errorf("%s: no symbol %s", name, f.s)
		}
	}
	l.statusString = sym("cublasGetStatusString")
	if prop == nil {
		C.cb_close(h)
		return nil, fmt.Errorf("%s: no symbol cublasGetProperty (cuBLAS before 11)", name)
	}
	for i, v := range []*int{&l.major, &l.minor, &l.patch} {
		var x C.int
		if s := C.cb_get_property(prop, C.int(i), &x); s != 0 {
			C.cb_close(h)
			return nil, fmt.Errorf("%s: cublasGetProperty: %s", name, l.status(int(s)))
		}
		*v = int(x)
	}
	if l.major < 11 {
		C.cb_close(h)
		return nil, fmt.Errorf("%s is cuBLAS %d.%d; 11 or later is needed", name, l.major, l.minor)
	}
	return l, nil
}

// cublasStatusNames name cublasStatus_t values for libraries without
// cublasGetStatusString.
var cublasStatusNames = map[int]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
}

func (l *cublasLib) status(s int) string {
	if l.statusString != nil {
		if p := C.cb_status_string(l.statusString, C.int(s)); p != nil {
			return fmt.Sprintf("%s (%d)", C.GoString(p), s)
		}
	}
	if n, ok := cublasStatusNames[s]; ok {
		return fmt.Sprintf("%s (%d)", n, s)
	}
	return fmt.Sprintf("cuBLAS status %d", s)
}

// cublasHandle creates d's handle on first use, bound to d's stream (a
// CUstream is a cudaStream_t). It runs inside d.do: cuBLAS adopts the
// context current on the thread.
func (d *Device) cublasHandle(l *cublasLib) error {
	if d.blas != 0 {
		return nil
	}
	var h C.uintptr_t
	if s := C.cb_create(l.create, &h); s != 0 {
		return fmt.Errorf("cuBLAS: cublasCreate: %s", l.status(int(s)))
	}
	stream := C.uintptr_t(uintptr(unsafe.Pointer(d.stream.C())))
	if s := C.cb_set_stream(l.setStream, h, stream); s != 0 {
		C.cb_destroy(l.destroy, h)
		return fmt.Errorf("cuBLAS: cublasSetStream: %s", l.status(int(s)))
	}
	mode := cublasDefaultMath
	if d.TensorCores() {
		mode = cublasTF32TensorOpMath
	}
	if s := C.cb_set_math(l.setMath, h, C.int(mode)); s != 0 {
		C.cb_destroy(l.destroy, h)
		return fmt.Errorf("cuBLAS: cublasSetMathMode: %s", l.status(int(s)))
	}
	d.blas = uintptr(h)
	return nil
}

// closeCublas destroys d's handle, if any; Close calls it inside d.do.
func (d *Device) closeCublas() {
	if d.blas != 0 && cublasL != nil {
		C.cb_destroy(cublasL.destroy, C.uintptr_t(d.blas))
	}
	d.blas = 0
}

// gemmCublas runs GemmRef's product with cuBLAS on d's stream: TF32
// tensor cores with FP32 accumulation (CUBLAS_COMPUTE_32F_FAST_TF32) on
// sm_80 and later, FP32 before. p is validated by Gemm.
func (d *Device) gemmCublas(p GemmParams, a, b, c Buf) error {
	if _, err := LoadCublas(); err != nil {
		return err
	}
	l := cublasL
	if p.M == 0 || p.N == 0 {
		return nil
	}
	calls, err := cublasCalls(p)
	if err != nil {
		return err
	}
	compute := cublasCompute32F
	if d.TensorCores() {
		compute = cublasCompute32FFastTF32
	}
	op := func(t bool) C.int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	at := func(x Buf, off int) C.uintptr_t { return C.uintptr_t(uintptr(x.ptr) + uintptr(off)*4) }
	return d.do(func() error {
		if err := d.cublasHandle(l); err != nil {
			return err
		}
		for _, cl := range calls {
			// The call's A operand is the row-major B and vice versa.
			s := C.cb_gemm(l.gemm, C.uintptr_t(d.blas), op(cl.TransA), op(cl.TransB),
				C.int(cl.M), C.int(cl.N), C.int(cl.K), C.float(cl.Alpha),
				at(b, cl.A.Off), C.int(cl.A.Ld), C.longlong(cl.A.Stride),
				at(a, cl.B.Off), C.int(cl.B.Ld), C.longlong(cl.B.Stride),
				C.float(cl.Beta), at(c, cl.C.Off), C.int(cl.C.Ld), C.longlong(cl.C.Stride),
				C.int(cl.Batch), C.int(compute))
			if s != 0 {
				return fmt.Errorf("cuBLAS: cublasGemmStridedBatchedEx %dx%dx%d batch %d: %s",
					p.M, p.N, p.K, cl.Batch, l.status(int(s)))
			}
		}
		return nil
	})
}
