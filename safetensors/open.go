package safetensors

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Reader reads tensors one at a time from an open file, so a large
// checkpoint can be converted without holding its raw bytes in memory.
type Reader struct {
	// Metadata is the optional "__metadata__" object (nil when absent).
	Metadata map[string]string
	// Infos are the tensors in storage order.
	Infos  []Info
	byName map[string]int
	f      *os.File
	path   string
	base   int64 // file offset of the data section
}

// Open parses and validates the header of the file at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func newReader(f *os.File, path string) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: safetensors: file of %d bytes is too short for the 8-byte header length", path, size)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("%s: safetensors: header length %d exceeds the %d-byte limit", path, n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		return nil, fmt.Errorf("%s: safetensors: header length %d runs past the end of the %d-byte file", path, n, size)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%s: read header: %w", path, err)
	}
	meta, infos, err := parseHeader(hdr, size-8-int64(n))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Reader{Metadata: meta, Infos: infos, byName: make(map[string]int, len(infos)), f: f, path: path, base: 8 + int64(n)}
	for i, in := range infos {
		r.byName[in.Name] = i
	}
	return r, nil
}

// Info returns the description of the tensor called name.
func (r *Reader) Info(name string) (Info, bool) {
	i, ok := r.byName[name]
	if !ok {
		return Info{}, false
	}
	return r.Infos[i], true
}

// Tensor reads the raw bytes of the tensor called name.
func (r *Reader) Tensor(name string) (Tensor, error) {
	in, ok := r.Info(name)
	if !ok {
		return Tensor{}, fmt.Errorf("%s: no tensor %q", r.path, name)
	}
	b := make([]byte, in.End-in.Begin)
	if _, err := r.f.ReadAt(b, r.base+in.Begin); err != nil {
		return Tensor{}, fmt.Errorf("%s: read tensor %q: %w", r.path, name, err)
	}
	return Tensor{Name: in.Name, DType: in.DType, Shape: in.Shape, Data: b}, nil
}

// Float32s reads the tensor called name converted to float32 (see
// Tensor.Float32s), in chunks so that only the float32 copy stays in memory.
func (r *Reader) Float32s(name string) ([]float32, Info, error) {
	in, ok := r.Info(name)
	if !ok {
		return nil, Info{}, fmt.Errorf("%s: no tensor %q", r.path, name)
	}
	size := in.DType.Size()
	out := make([]float32, (in.End-in.Begin)/int64(size))
	const chunk = 1 << 20 // elements per read
	buf := make([]byte, min(len(out), chunk)*size)
	for done := 0; done < len(out); {
		k := min(len(out)-done, chunk)
		if _, err := r.f.ReadAt(buf[:k*size], r.base+in.Begin+int64(done*size)); err != nil {
			return nil, in, fmt.Errorf("%s: read tensor %q: %w", r.path, name, err)
		}
		if err := decodeFloat32s(in.DType, buf[:k*size], out[done:done+k]); err != nil {
			return nil, in, fmt.Errorf("%s: tensor %q: %w", r.path, name, err)
		}
		done += k
	}
	return out, in, nil
}

// Close closes the underlying file.
func (r *Reader) Close() error { return r.f.Close() }
