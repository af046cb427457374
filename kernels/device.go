//go:build gpu || gpuemu

package kernels

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Buf is a span of device memory. The zero Buf is "absent" (for optional
// inputs such as a mask); At views a suffix of a Buf without owning it.
type Buf struct {
	ptr   devPtr
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
	return Buf{b.ptr + devPtr(off*4), b.bytes - int64(off)*4}
}

// Alloc returns a zeroed device buffer of n 4-byte elements.
func (d *Device) Alloc(n int) (Buf, error) { return d.AllocBytes(int64(n) * 4) }

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

// liveCount counts a device's allocations not yet freed, so tests can check
// that whatever allocates on the device gives it all back (Device.Live).
type liveCount struct {
	mu      sync.Mutex
	buffers int
	bytes   int64
}

func (c *liveCount) add(n int, bytes int64) {
	c.mu.Lock()
	c.buffers += n
	c.bytes += bytes
	c.mu.Unlock()
}

// Live returns the number and total size of the buffers allocated on the
// device and not freed, the device's own scratch buffer included (Close
// frees it).
func (c *liveCount) Live() (buffers int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buffers, c.bytes
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
	old := d.scratch.bytes
	if err := d.Free(d.scratch); err != nil {
		return Buf{}, err
	}
	d.scratch = Buf{}
	b, err := d.AllocBytes(max(bytes, 2*old))
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

type dim3 [3]int

// blocks returns the number of blocks of size per covering n, capped for
// grid-stride kernels.
func blocks(n, per int) int { return min((n+per-1)/per, 65535*8) }

// packArgs packs launch arguments, each into its own 8-byte slot of which
// the kernel reads the parameter's size, and returns their type codes (p
// pointer, i int32, l int64, u uint32, U uint64, f float32). Arguments are
// Buf (a device pointer; the zero Buf is a null pointer), int (as a 32-bit
// int), int32, int64, uint32, uint64 or float32.
func packArgs(name string, args []any) ([]uint64, string, error) {
	slots := make([]uint64, len(args))
	var sig strings.Builder
	for i, a := range args {
		switch v := a.(type) {
		case Buf:
			slots[i] = uint64(v.ptr)
			sig.WriteByte('p')
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return nil, "", fmt.Errorf("cuda: %s: argument %d = %d overflows int32", name, i, v)
			}
			slots[i] = uint64(uint32(int32(v)))
			sig.WriteByte('i')
		case int32:
			slots[i] = uint64(uint32(v))
			sig.WriteByte('i')
		case int64:
			slots[i] = uint64(v)
			sig.WriteByte('l')
		case uint32:
			slots[i] = uint64(v)
			sig.WriteByte('u')
		case uint64:
			slots[i] = v
			sig.WriteByte('U')
		case float32:
			slots[i] = uint64(math.Float32bits(v))
			sig.WriteByte('f')
		default:
			panic(fmt.Sprintf("kernels: %s: unsupported argument type %T", name, a))
		}
	}
	return slots, sig.String(), nil
}
