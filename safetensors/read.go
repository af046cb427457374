package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
)

const metadataKey = "__metadata__"

// MaxHeaderSize bounds the JSON header (the reference implementation uses
// the same 100 MB limit), so a corrupt length cannot make us allocate
// gigabytes.
const MaxHeaderSize = 100 << 20

// Info describes one tensor of a file without its bytes. Begin and End are
// byte offsets relative to the start of the data section.
type Info struct {
	Name       string
	DType      DType
	Shape      []int
	Begin, End int64
}

// File is a parsed safetensors file held in memory.
type File struct {
	// Metadata is the optional "__metadata__" object (nil when absent).
	Metadata map[string]string
	// Tensors are in storage order (by offset).
	Tensors []Tensor
	byName  map[string]int
}

// Get returns the tensor called name.
func (f *File) Get(name string) (*Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Names lists the tensor names in sorted order.
func (f *File) Names() []string {
	names := make([]string, len(f.Tensors))
	for i := range f.Tensors {
		names[i] = f.Tensors[i].Name
	}
	sort.Strings(names)
	return names
}

// Read parses a whole file held in b. The returned tensors alias b.
func Read(b []byte) (*File, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("safetensors: file of %d bytes is too short for the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > MaxHeaderSize {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header length %d runs past the end of the %d-byte file", n, len(b))
	}
	data := b[8+n:]
	meta, infos, err := parseHeader(b[8:8+n], int64(len(data)))
	if err != nil {
		return nil, err
	}
	f := &File{Metadata: meta, Tensors: make([]Tensor, len(infos)), byName: make(map[string]int, len(infos))}
	for i, in := range infos {
		f.Tensors[i] = Tensor{Name: in.Name, DType: in.DType, Shape: in.Shape, Data: data[in.Begin:in.End:in.End]}
		f.byName[in.Name] = i
	}
	return f, nil
}

// ReadFile reads and parses the file at path into memory.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Read(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// headerEntry is one tensor's header object.
type headerEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// parseHeader validates the JSON header against a data section of dataLen
// bytes and returns the tensors in storage order.
func parseHeader(hdr []byte, dataLen int64) (map[string]string, []Info, error) {
	if len(hdr) == 0 || hdr[0] != '{' {
		return nil, nil, errors.New("safetensors: header is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	var meta map[string]string
	var infos []Info
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: header: %w", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("safetensors: header: unexpected %v", tok)
		}
		if seen[name] {
			return nil, nil, fmt.Errorf("safetensors: header: duplicate entry %q", name)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("safetensors: header: entry %q: %w", name, err)
		}
		if name == metadataKey {
			if err := strictUnmarshal(raw, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: header: %s must map strings to strings: %w", metadataKey, err)
			}
			continue
		}
		in, err := parseEntry(name, raw, dataLen)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: header: %w", err)
		}
		infos = append(infos, in)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	// The spec allows trailing spaces as padding and nothing else.
	if len(bytes.Trim(hdr[dec.InputOffset():], " ")) != 0 {
		return nil, nil, errors.New("safetensors: header: bytes after the JSON object other than space padding")
	}
	if err := checkLayout(infos, dataLen); err != nil {
		return nil, nil, err
	}
	return meta, infos, nil
}

// parseEntry decodes and checks one tensor's header object.
func parseEntry(name string, raw json.RawMessage, dataLen int64) (Info, error) {
	var e headerEntry
	if err := strictUnmarshal(raw, &e); err != nil {
		return Info{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	if name == "" {
		return Info{}, errors.New("tensor with an empty name")
	}
	d, err := ParseDType(e.DType)
	if err != nil {
		return Info{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	if e.Shape == nil {
		return Info{}, fmt.Errorf("tensor %q: missing shape", name)
	}
	if len(e.DataOffsets) != 2 {
		return Info{}, fmt.Errorf("tensor %q: data_offsets must be [begin, end], got %d numbers", name, len(e.DataOffsets))
	}
	b, en := e.DataOffsets[0], e.DataOffsets[1]
	if b > en {
		return Info{}, fmt.Errorf("tensor %q: data_offsets [%d, %d] end before they begin", name, b, en)
	}
	if en > uint64(dataLen) {
		return Info{}, fmt.Errorf("tensor %q: data_offsets [%d, %d] run past the %d data bytes", name, b, en, dataLen)
	}
	n, err := numElements(e.Shape)
	if err != nil {
		return Info{}, fmt.Errorf("tensor %q: %w", name, err)
	}
	if want := uint64(n) * uint64(d.Size()); en-b != want {
		return Info{}, fmt.Errorf("tensor %q: %s%v needs %d bytes but data_offsets [%d, %d] hold %d", name, d, e.Shape, want, b, en, en-b)
	}
	return Info{Name: name, DType: d, Shape: e.Shape, Begin: int64(b), End: int64(en)}, nil
}

// checkLayout sorts infos by offset and requires the tensors to tile the
// data section exactly: no overlap, no gap, nothing left over.
func checkLayout(infos []Info, dataLen int64) error {
	sort.SliceStable(infos, func(i, j int) bool {
		if infos[i].Begin != infos[j].Begin {
			return infos[i].Begin < infos[j].Begin
		}
		return infos[i].End < infos[j].End
	})
	var pos int64
	prev := ""
	for _, in := range infos {
		switch {
		case in.Begin < pos:
			return fmt.Errorf("safetensors: tensor %q (bytes %d-%d) overlaps tensor %q (ending at %d)", in.Name, in.Begin, in.End, prev, pos)
		case in.Begin > pos:
			return fmt.Errorf("safetensors: gap of %d bytes before tensor %q at offset %d", in.Begin-pos, in.Name, in.Begin)
		}
		pos = in.End
		prev = in.Name
	}
	if pos != dataLen {
		return fmt.Errorf("safetensors: %d data bytes after the last tensor", dataLen-pos)
	}
	return nil
}

// strictUnmarshal decodes one JSON value, rejecting unknown fields.
func strictUnmarshal(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
