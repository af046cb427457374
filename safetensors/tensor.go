package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Tensor is one named array. Data holds the raw little-endian bytes, exactly
// NumElements()*DType.Size() of them. Tensors returned by Read alias the
// buffer they were read from.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// numElements multiplies shape out, failing on negative sizes or overflow.
func numElements(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("negative dimension %d in shape %v", d, shape)
		}
		if d != 0 && n > math.MaxInt32*int(1<<20)/d { // keeps n*8 far from overflowing
			return 0, fmt.Errorf("shape %v is too large", shape)
		}
		n *= d
	}
	return n, nil
}

// NumElements is the product of the shape (1 for a scalar).
func (t *Tensor) NumElements() int {
	n, _ := numElements(t.Shape)
	return n
}

// Check validates the name, dtype and that len(Data) matches the shape.
func (t *Tensor) Check() error {
	if t.Name == "" {
		return fmt.Errorf("tensor with an empty name")
	}
	if t.Name == metadataKey {
		return fmt.Errorf("tensor name %q is reserved", metadataKey)
	}
	if !t.DType.Valid() {
		return fmt.Errorf("tensor %q: unknown dtype %q", t.Name, t.DType)
	}
	n, err := numElements(t.Shape)
	if err != nil {
		return fmt.Errorf("tensor %q: %w", t.Name, err)
	}
	if want := n * t.DType.Size(); len(t.Data) != want {
		return fmt.Errorf("tensor %q: %s%v needs %d bytes, has %d", t.Name, t.DType, t.Shape, want, len(t.Data))
	}
	return nil
}

// FromFloat32s builds an F32 tensor; len(v) must match shape.
func FromFloat32s(name string, shape []int, v []float32) (Tensor, error) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	t := Tensor{Name: name, DType: F32, Shape: append([]int(nil), shape...), Data: b}
	return t, t.Check()
}

// FromInt64s builds an I64 tensor; len(v) must match shape.
func FromInt64s(name string, shape []int, v []int64) (Tensor, error) {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	t := Tensor{Name: name, DType: I64, Shape: append([]int(nil), shape...), Data: b}
	return t, t.Check()
}

// Float32s converts the elements to float32: F32 as is, F16 and BF16
// exactly, F64 rounded to nearest. Other dtypes are an error.
func (t *Tensor) Float32s() ([]float32, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	out := make([]float32, t.NumElements())
	return out, decodeFloat32s(t.DType, t.Data, out)
}

// decodeFloat32s converts len(out) elements of raw data of type d.
func decodeFloat32s(d DType, b []byte, out []float32) error {
	switch d {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case F16:
		for i := range out {
			out[i] = halfToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	case F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	default:
		return fmt.Errorf("cannot convert %s to float32", d)
	}
	return nil
}

// Int64s converts integer elements (I8..I64, U8..U32, BOOL) to int64.
func (t *Tensor) Int64s() ([]int64, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	n := t.NumElements()
	out := make([]int64, n)
	b := t.Data
	for i := range out {
		switch t.DType {
		case Bool, U8:
			out[i] = int64(b[i])
		case I8:
			out[i] = int64(int8(b[i]))
		case I16:
			out[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case U16:
			out[i] = int64(binary.LittleEndian.Uint16(b[2*i:]))
		case I32:
			out[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		case U32:
			out[i] = int64(binary.LittleEndian.Uint32(b[4*i:]))
		case I64:
			out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		default:
			return nil, fmt.Errorf("tensor %q: cannot convert %s to int64", t.Name, t.DType)
		}
	}
	return out, nil
}

// halfToFloat32 widens an IEEE 754 binary16 value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: mant * 2^-24
		v := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
