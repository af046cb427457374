package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// Write stores tensors and optional metadata in safetensors format. Tensors
// are laid out in name order and the header is padded with spaces to a
// multiple of 8 bytes, so the same tensors always give the same bytes.
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return tensors[order[a]].Name < tensors[order[b]].Name })
	for k := range order {
		t := &tensors[order[k]]
		if err := t.Check(); err != nil {
			return fmt.Errorf("safetensors: write: %w", err)
		}
		if k > 0 && tensors[order[k-1]].Name == t.Name {
			return fmt.Errorf("safetensors: write: duplicate tensor name %q", t.Name)
		}
	}
	hdr, err := encodeHeader(tensors, order, metadata)
	if err != nil {
		return err
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return fmt.Errorf("safetensors: write: %w", err)
	}
	if _, err := w.Write(hdr); err != nil {
		return fmt.Errorf("safetensors: write: %w", err)
	}
	for _, i := range order {
		if _, err := w.Write(tensors[i].Data); err != nil {
			return fmt.Errorf("safetensors: write: %w", err)
		}
	}
	return nil
}

// encodeHeader writes the JSON header: metadata first (keys sorted), then
// the tensors in storage order, padded with spaces to a multiple of 8.
func encodeHeader(tensors []Tensor, order []int, metadata map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			buf.WriteByte(',')
		}
		first = false
	}
	if metadata != nil {
		sep()
		m, err := json.Marshal(metadata) // encoding/json sorts map keys
		if err != nil {
			return nil, fmt.Errorf("safetensors: write metadata: %w", err)
		}
		buf.WriteString(`"` + metadataKey + `":`)
		buf.Write(m)
	}
	var off uint64
	for _, i := range order {
		t := &tensors[i]
		sep()
		name, err := json.Marshal(t.Name)
		if err != nil {
			return nil, err
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		e, err := json.Marshal(headerEntry{DType: string(t.DType), Shape: shape, DataOffsets: []uint64{off, off + uint64(len(t.Data))}})
		if err != nil {
			return nil, err
		}
		off += uint64(len(t.Data))
		buf.Write(name)
		buf.WriteByte(':')
		buf.Write(e)
	}
	buf.WriteByte('}')
	for buf.Len()%8 != 0 {
		buf.WriteByte(' ')
	}
	return buf.Bytes(), nil
}
