//go:build gpu

package kernels

import (
	"embed"
	"fmt"
	"math"
	"path"
	"runtime"
	"sync"
	"unsafe"

	// Must come before gorgonia.org/cu's init: see its doc comment.
	"compbench/kernels/cudaguard"

	"gorgonia.org/cu"
)

// devPtr is a device address.
type devPtr = cu.DevicePtr

//go:embed ptx/*.ptx
var ptxFS embed.FS

// Event marks a point in the device's stream, for timing.
type Event struct{ ev cu.Event }

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
	blas    uintptr // cuBLAS handle, created on first GemmCublas use (cublas_cuda.go)
	liveCount
}

// numDevices counts the GPUs, first refusing clearly where the driver did
// not initialise (kernels/cudaguard lets such a binary start, for --device
// cpu).
func numDevices() (int, error) {
	if cudaguard.Err != nil {
		return 0, fmt.Errorf("cuda: no usable NVIDIA GPU/driver on this machine (%v); use --device cpu here, or run on a GPU node", cudaguard.Err)
	}
	n, err := cu.NumDevices()
	if err != nil {
		return 0, fmt.Errorf("cuda: counting devices: %w", err)
	}
	return n, nil
}

// Open initialises GPU ordinal (0 for the first), loads the embedded PTX
// (the driver JIT-compiles it for the device) and creates the stream.
func Open(ordinal int) (*Device, error) {
	n, err := numDevices()
	if err != nil {
		return nil, err
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

// MemInfo returns GPU ordinal's free and total memory in bytes
// (cuMemGetInfo). It holds the device's primary context only for the
// query, so a command can refuse a run that would not fit before it opens
// the device and allocates anything.
func MemInfo(ordinal int) (free, total int64, err error) {
	n, err := numDevices()
	if err != nil {
		return 0, 0, err
	}
	if ordinal < 0 || ordinal >= n {
		return 0, 0, fmt.Errorf("cuda: device %d requested, %d present", ordinal, n)
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d context: %w", ordinal, err)
	}
	defer dev.ReleasePrimaryCtx()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(ctx); err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d: set context: %w", ordinal, err)
	}
	// Unbound before the release, so the thread keeps no context that the
	// release may destroy.
	defer cu.SetCurrentContext(cu.CUContext{})
	if free, total, err = cu.MemInfo(); err != nil {
		return 0, 0, fmt.Errorf("cuda: device %d: cuMemGetInfo: %w", ordinal, err)
	}
	return free, total, nil
}

// String names the device and its compute capability.
func (d *Device) String() string { return fmt.Sprintf("%s (sm_%d%d)", d.name, d.major, d.minor) }

// TensorCores reports whether the device runs the TF32 WMMA kernel (sm_80+).
func (d *Device) TensorCores() bool { return d.major >= 8 }

// Close releases the modules, stream, scratch memory and context.
func (d *Device) Close() error {
	return d.do(func() error {
		d.closeCublas()
		if !d.scratch.IsZero() {
			d.freeLocked(d.scratch) // counted, so Live is zero after Close
			d.scratch = Buf{}
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

// AllocBytes returns a zeroed device buffer of the given size.
func (d *Device) AllocBytes(bytes int64) (Buf, error) {
	var b Buf
	err := d.do(func() error {
		p, err := cu.MemAlloc(max(bytes, 4))
		if err != nil {
			return fmt.Errorf("cuda: allocating %d bytes: %w", bytes, err)
		}
		b = Buf{p, bytes}
		d.add(1, bytes)
		return cu.MemsetD8Async(p, 0, max(bytes, 4), d.stream)
	})
	return b, err
}

// Free releases b (not a view made by At).
func (d *Device) Free(b Buf) error {
	if b.IsZero() {
		return nil
	}
	return d.do(func() error { return d.freeLocked(b) })
}

// freeLocked is Free inside d.do (d.mu held, the context current).
func (d *Device) freeLocked(b Buf) error {
	if err := cu.MemFree(b.ptr); err != nil {
		return err
	}
	d.add(-1, -b.bytes)
	return nil
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

// launch queues kernel name on the stream with args packed by packArgs.
func (d *Device) launch(name string, grid, block dim3, shared int, args ...any) error {
	for _, g := range grid {
		if g <= 0 {
			return nil // empty problem
		}
	}
	slots, _, err := packArgs(name, args)
	if err != nil {
		return err
	}
	ptrs := make([]unsafe.Pointer, len(slots))
	for i := range slots {
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
