//go:build gpu

package kernels

import (
	"embed"
	"fmt"
	"math"
	"path"
	"runtime"
	"sort"
	"sync"
	"unsafe"

	// Must come before gorgonia.org/cu's init: see its doc comment.
	_ "compgen/kernels/cudaguard"

	"gorgonia.org/cu"
)

//go:embed ptx/*.ptx
var ptxFS embed.FS

// Buf is a span of device memory. The zero Buf is "absent" (for optional
// inputs such as a mask); At views a suffix of a Buf without owning it.
type Buf struct {
	ptr   cu.DevicePtr
	bytes int64
}

// Bytes returns the size of b in bytes.
func (b Buf) Bytes() int64 { return b.bytes }

// Len returns the number of 4-byte elements (float32 or int32) in b.
func (b Buf) Len() int { return int(b.bytes / 4) }

// IsZero reports whether b is the absent buffer.
func (b Buf) IsZero() bool { return b.ptr == 0 }

// At returns the view of b from 4-byte element off on.
func (b Buf) At(off int) Buf {
	if off < 0 || int64(off)*4 > b.bytes {
		panic(fmt.Sprintf("kernels: offset %d outside buffer of %d elements", off, b.Len()))
	}
	return Buf{b.ptr + cu.DevicePtr(off*4), b.bytes - int64(off)*4}
}

// Event marks a point in the device's stream, for timing.
type Event struct{ ev cu.Event }

// GemmMode selects the matrix-product kernel.
type GemmMode int

const (
	// GemmAuto uses the tensor cores (TF32) on sm_80 and later, else FP32.
	GemmAuto GemmMode = iota
	// GemmTF32 forces the WMMA TF32 kernel (sm_80 and later only).
	GemmTF32
	// GemmFP32 forces the FP32 SIMT kernel.
	GemmFP32
)

// Device is one GPU with one CUDA context and one stream; all launches are
// asynchronous on that stream, and downloads wait for them. A Device may be
// used from any goroutine but not concurrently: every call binds the
// context to the calling OS thread for its duration.
type Device struct {
	// GemmKind selects the matrix-product kernel; the zero value is GemmAuto.
	GemmKind GemmMode

	mu      sync.Mutex
	dev     cu.Device
	ctx     cu.CUContext
	stream  cu.Stream
	mods    []cu.Module
	fns     map[string]cu.Function
	major   int
	minor   int
	name    string
	scratch Buf
}

// Open initialises GPU ordinal (0 for the first), loads the embedded PTX
// (the driver JIT-compiles it for the device) and creates the stream.
func Open(ordinal int) (*Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d requested, %d present", ordinal, n)
	}
	d := &Device{fns: map[string]cu.Function{}}
	if d.dev, err = cu.GetDevice(ordinal); err != nil {
		return nil, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	if d.name, err = d.dev.Name(); err != nil {
		return nil, fmt.Errorf("cuda: device %d name: %w", ordinal, err)
	}
	if d.major, d.minor, err = d.dev.ComputeCapability(); err != nil {
		return nil, fmt.Errorf("cuda: device %d capability: %w", ordinal, err)
	}
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("cuda: device %d context: %w", ordinal, err)
	}
	err = d.do(func() error {
		var err error
		if d.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
			return fmt.Errorf("cuda: stream: %w", err)
		}
		files, err := ptxFS.ReadDir("ptx")
		if err != nil {
			return err
		}
		for _, f := range files {
			src, err := ptxFS.ReadFile(path.Join("ptx", f.Name()))
			if err != nil {
				return err
			}
			// LoadData wants a NUL-terminated image.
			m, err := cu.LoadData(string(src) + "\x00")
			if err != nil {
				return fmt.Errorf("cuda: loading %s (needs a driver that JITs PTX 7.8 for compute_80+): %w", f.Name(), err)
			}
			d.mods = append(d.mods, m)
		}
		return nil
	})
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// String names the device and its compute capability.
func (d *Device) String() string { return fmt.Sprintf("%s (sm_%d%d)", d.name, d.major, d.minor) }

// TensorCores reports whether the device runs the TF32 WMMA kernel (sm_80+).
func (d *Device) TensorCores() bool { return d.major >= 8 }

// Close releases the modules, stream, scratch memory and context.
func (d *Device) Close() error {
	return d.do(func() error {
		for _, b := range []*Buf{&d.scratch} {
			if !b.IsZero() {
				cu.MemFree(b.ptr)
				*b = Buf{}
			}
		}
		for _, m := range d.mods {
			m.Unload()
		}
		d.mods = nil
		if d.stream != (cu.Stream{}) {
			d.stream.Destroy()
		}
		return d.dev.ReleasePrimaryCtx()
	})
}

// do runs f with the device's context current on a locked OS thread.
func (d *Device) do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("cuda: set context: %w", err)
	}
	return f()
}

// Alloc returns a zeroed device buffer of n 4-byte elements.
func (d *Device) Alloc(n int) (Buf, error) { return d.AllocBytes(int64(n) * 4) }

// AllocBytes returns a zeroed device buffer of the given size.
func (d *Device) AllocBytes(bytes int64) (Buf, error) {
	var b Buf
	err := d.do(func() error {
		p, err := cu.MemAlloc(max(bytes, 4))
		if err != nil {
			return fmt.Errorf("cuda: allocating %d bytes: %w", bytes, err)
		}
		b = Buf{p, bytes}
		return cu.MemsetD8Async(p, 0, max(bytes, 4), d.stream)
	})
	return b, err
}

// Free releases b (not a view made by At).
func (d *Device) Free(b Buf) error {
	if b.IsZero() {
		return nil
	}
	return d.do(func() error { return cu.MemFree(b.ptr) })
}

func (d *Device) copyIn(dst Buf, src unsafe.Pointer, bytes int64) error {
	if bytes > dst.bytes {
		return fmt.Errorf("cuda: upload of %d bytes into a buffer of %d", bytes, dst.bytes)
	}
	if bytes == 0 {
		return nil
	}
	return d.do(func() error {
		// Synchronous: src is Go memory that may move or be reused after return.
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		return cu.MemcpyHtoD(dst.ptr, src, bytes)
	})
}

func (d *Device) copyOut(dst unsafe.Pointer, src Buf, bytes int64) error {
	if bytes > src.bytes {
		return fmt.Errorf("cuda: download of %d bytes from a buffer of %d", bytes, src.bytes)
	}
	if bytes == 0 {
		return nil
	}
	return d.do(func() error {
		if err := d.stream.Synchronize(); err != nil {
			return fmt.Errorf("cuda: kernel failed: %w", err)
		}
		return cu.MemcpyDtoH(dst, src.ptr, bytes)
	})
}

// Upload copies x into the start of dst.
func (d *Device) Upload(dst Buf, x []float32) error {
	return d.copyIn(dst, unsafe.Pointer(unsafe.SliceData(x)), int64(len(x))*4)
}

// UploadInt32 copies x into the start of dst.
func (d *Device) UploadInt32(dst Buf, x []int32) error {
	return d.copyIn(dst, unsafe.Pointer(unsafe.SliceData(x)), int64(len(x))*4)
}

// UploadFloat64 copies x into the start of dst.
func (d *Device) UploadFloat64(dst Buf, x []float64) error {
	return d.copyIn(dst, unsafe.Pointer(unsafe.SliceData(x)), int64(len(x))*8)
}

// Download waits for the stream and copies the start of src into x.
func (d *Device) Download(x []float32, src Buf) error {
	return d.copyOut(unsafe.Pointer(unsafe.SliceData(x)), src, int64(len(x))*4)
}

// DownloadInt32 waits for the stream and copies the start of src into x.
func (d *Device) DownloadInt32(x []int32, src Buf) error {
	return d.copyOut(unsafe.Pointer(unsafe.SliceData(x)), src, int64(len(x))*4)
}

// DownloadFloat64 waits for the stream and copies the start of src into x.
func (d *Device) DownloadFloat64(x []float64, src Buf) error {
	return d.copyOut(unsafe.Pointer(unsafe.SliceData(x)), src, int64(len(x))*8)
}

// Zero clears the first n 4-byte elements of b on the stream.
func (d *Device) Zero(b Buf, n int) error {
	if int64(n)*4 > b.bytes {
		return fmt.Errorf("cuda: zeroing %d elements of a buffer of %d", n, b.Len())
	}
	return d.do(func() error { return cu.MemsetD32Async(b.ptr, 0, int64(n), d.stream) })
}

// fill sets the first n float32 elements of b to v on the stream.
func (d *Device) fill(b Buf, n int, v float32) error {
	if int64(n)*4 > b.bytes {
		return fmt.Errorf("cuda: filling %d elements of a buffer of %d", n, b.Len())
	}
	return d.do(func() error { return cu.MemsetD32Async(b.ptr, uint(math.Float32bits(v)), int64(n), d.stream) })
}

// Copy copies n 4-byte elements from src to dst on the stream.
func (d *Device) Copy(dst, src Buf, n int) error {
	if int64(n)*4 > dst.bytes || int64(n)*4 > src.bytes {
		return fmt.Errorf("cuda: copying %d elements between buffers of %d and %d", n, src.Len(), dst.Len())
	}
	return d.do(func() error { return cu.MemcpyDtoDAsync(dst.ptr, src.ptr, int64(n)*4, d.stream) })
}

// Sync waits for everything launched so far and reports a kernel failure.
func (d *Device) Sync() error {
	return d.do(func() error { return d.stream.Synchronize() })
}

// Record returns an event recorded at the current end of the stream.
func (d *Device) Record() (Event, error) {
	var e Event
	err := d.do(func() error {
		ev, err := cu.MakeEvent(cu.DefaultEvent)
		if err != nil {
			return err
		}
		e.ev = ev
		return ev.Record(d.stream)
	})
	return e, err
}

// Elapsed waits for end and returns the milliseconds between two events,
// then releases both.
func (d *Device) Elapsed(start, end Event) (float64, error) {
	var ms float64
	err := d.do(func() error {
		if err := end.ev.Synchronize(); err != nil {
			return err
		}
		var err error
		ms, err = start.ev.Elapsed(end.ev)
		cu.DestroyEvent(&start.ev)
		cu.DestroyEvent(&end.ev)
		return err
	})
	return ms, err
}

// scratchBuf returns a device buffer of at least bytes, grown as needed and
// owned by the device; it is valid until the next call that uses scratch.
func (d *Device) scratchBuf(bytes int64) (Buf, error) {
	if d.scratch.bytes >= bytes {
		return d.scratch, nil
	}
	if err := d.Sync(); err != nil {
		return Buf{}, err
	}
	if err := d.Free(d.scratch); err != nil {
		return Buf{}, err
	}
	d.scratch = Buf{}
	b, err := d.AllocBytes(max(bytes, 2*d.scratch.bytes))
	if err != nil {
		return Buf{}, err
	}
	d.scratch = b
	return b, nil
}

// Kernels lists the kernel names the launchers use, sorted.
func Kernels() []string {
	names := make([]string, 0, len(kernelNames))
	for n := range kernelNames {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// fn returns the named kernel, looked up once.
func (d *Device) fn(name string) (cu.Function, error) {
	if f, ok := d.fns[name]; ok {
		return f, nil
	}
	for _, m := range d.mods {
		if f, err := m.Function(name); err == nil {
			d.fns[name] = f
			return f, nil
		}
	}
	return cu.Function{}, fmt.Errorf("cuda: kernel %s not in the embedded PTX", name)
}

type dim3 [3]int

// launch queues kernel name on the stream. Arguments are Buf (as device
// pointers; the zero Buf is a null pointer), int (as a 32-bit int), int64,
// uint32, uint64 or float32; each travels in its own 8-byte slot, of which
// the driver reads the parameter's size.
func (d *Device) launch(name string, grid, block dim3, shared int, args ...any) error {
	for _, g := range grid {
		if g <= 0 {
			return nil // empty problem
		}
	}
	slots := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case Buf:
			slots[i] = uint64(v.ptr)
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return fmt.Errorf("cuda: %s: argument %d = %d overflows int32", name, i, v)
			}
			slots[i] = uint64(uint32(int32(v)))
		case int32:
			slots[i] = uint64(uint32(v))
		case int64:
			slots[i] = uint64(v)
		case uint32:
			slots[i] = uint64(v)
		case uint64:
			slots[i] = v
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		default:
			panic(fmt.Sprintf("kernels: %s: unsupported argument type %T", name, a))
		}
		ptrs[i] = unsafe.Pointer(&slots[i])
	}
	return d.do(func() error {
		f, err := d.fn(name)
		if err != nil {
			return err
		}
		if err := f.Launch(grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, d.stream, ptrs); err != nil {
			return fmt.Errorf("cuda: launching %s: %w", name, err)
		}
		return nil
	})
}

// blocks returns the number of blocks of size per covering n, capped for
// grid-stride kernels.
func blocks(n, per int) int { return min((n+per-1)/per, 65535*8) }
