package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// build assembles a file from a raw header string and data bytes.
func build(hdr string, data []byte) []byte {
	b := make([]byte, 8, 8+len(hdr)+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(hdr)))
	b = append(b, hdr...)
	return append(b, data...)
}

func mustF32(t *testing.T, name string, shape []int, v []float32) Tensor {
	t.Helper()
	x, err := FromFloat32s(name, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRoundTrip(t *testing.T) {
	ids, err := FromInt64s("ids", []int{3}, []int64{-1, 0, 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	in := []Tensor{
		mustF32(t, "w", []int{2, 3}, []float32{1, 2, 3, 4, 5, -6.5}),
		mustF32(t, "a.scalar", nil, []float32{math.Pi}),
		mustF32(t, "empty", []int{0, 4}, nil),
		ids,
	}
	meta := map[string]string{"format": "pt", "step": "7"}
	var buf bytes.Buffer
	if err := Write(&buf, in, meta); err != nil {
		t.Fatal(err)
	}
	if hl := binary.LittleEndian.Uint64(buf.Bytes()); hl%8 != 0 {
		t.Errorf("header length %d is not a multiple of 8", hl)
	}
	f, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Errorf("metadata %v, want %v", f.Metadata, meta)
	}
	if got, want := f.Names(), []string{"a.scalar", "empty", "ids", "w"}; !reflect.DeepEqual(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	for _, x := range in {
		t.Run(x.Name, func(t *testing.T) {
			y, ok := f.Get(x.Name)
			if !ok {
				t.Fatal("missing")
			}
			if y.DType != x.DType || len(y.Shape) != len(x.Shape) || !bytes.Equal(y.Data, x.Data) {
				t.Errorf("got %s%v %x, want %s%v %x", y.DType, y.Shape, y.Data, x.DType, x.Shape, x.Data)
			}
		})
	}
	v, _ := f.Tensors[len(f.Tensors)-1].Float32s()
	if !reflect.DeepEqual(v, []float32{1, 2, 3, 4, 5, -6.5}) {
		t.Errorf("w = %v", v)
	}
	n, err := ids.Int64s()
	if err != nil || !reflect.DeepEqual(n, []int64{-1, 0, 1 << 40}) {
		t.Errorf("ids = %v, %v", n, err)
	}

	// Same tensors in another order give the same bytes.
	var again bytes.Buffer
	if err := Write(&again, []Tensor{in[3], in[1], in[0], in[2]}, meta); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("writer output depends on input order")
	}

	// The streaming reader sees the same file.
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, info, err := r.Float32s("w")
	if err != nil || !reflect.DeepEqual(w, v) || !reflect.DeepEqual(info.Shape, []int{2, 3}) {
		t.Errorf("Open/Float32s: %v %v %v", w, info, err)
	}
	raw, err := r.Tensor("ids")
	if err != nil || !bytes.Equal(raw.Data, ids.Data) {
		t.Errorf("Open/Tensor: %v", err)
	}
	if _, err := r.Tensor("nope"); err == nil {
		t.Error("missing tensor: no error")
	}
}

// TestExactBytes pins the writer's layout: length, sorted header, padding.
func TestExactBytes(t *testing.T) {
	x := mustF32(t, "b", []int{1}, []float32{1})
	y := mustF32(t, "a", []int{1, 1}, []float32{2})
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{x, y}, nil); err != nil {
		t.Fatal(err)
	}
	hdr := `{"a":{"dtype":"F32","shape":[1,1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	want := build(hdr, []byte{0, 0, 0, 0x40, 0, 0, 0x80, 0x3f})
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("got\n%q\nwant\n%q", buf.Bytes(), want)
	}
}

func TestHalfConversions(t *testing.T) {
	tests := []struct {
		name string
		d    DType
		raw  []byte
		want float32
	}{
		{"f16 one", F16, []byte{0x00, 0x3c}, 1},
		{"f16 -2", F16, []byte{0x00, 0xc0}, -2},
		{"f16 max", F16, []byte{0xff, 0x7b}, 65504},
		{"f16 smallest subnormal", F16, []byte{0x01, 0x00}, float32(math.Ldexp(1, -24))},
		{"f16 negative zero", F16, []byte{0x00, 0x80}, float32(math.Copysign(0, -1))},
		{"f16 inf", F16, []byte{0x00, 0x7c}, float32(math.Inf(1))},
		{"bf16 one", BF16, []byte{0x80, 0x3f}, 1},
		{"bf16 -3.5", BF16, []byte{0x60, 0xc0}, -3.5},
		{"f64 third", F64, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.0/3)), float32(1.0 / 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := Tensor{Name: "x", DType: tc.d, Shape: []int{1}, Data: tc.raw}
			v, err := x.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			if math.Float32bits(v[0]) != math.Float32bits(tc.want) {
				t.Errorf("got %g, want %g", v[0], tc.want)
			}
		})
	}
	nan := Tensor{Name: "x", DType: F16, Shape: []int{1}, Data: []byte{0x01, 0x7e}}
	if v, _ := nan.Float32s(); !math.IsNaN(float64(v[0])) {
		t.Errorf("f16 NaN gave %g", v[0])
	}
	if _, err := (&Tensor{Name: "x", DType: I32, Shape: []int{1}, Data: make([]byte, 4)}).Float32s(); err == nil {
		t.Error("I32 to float32: no error")
	}
}

func TestMalformed(t *testing.T) {
	f4 := []byte{0, 0, 0x80, 0x3f}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"too short", []byte{1, 2, 3}, "too short"},
		{"header past end", append(binary.LittleEndian.AppendUint64(nil, 100), '{', '}'), "runs past the end"},
		{"huge header length", binary.LittleEndian.AppendUint64(nil, 1<<62), "exceeds"},
		{"not json", build("hello!!!", nil), "not a JSON object"},
		{"array", build("[1,2]   ", nil), "not a JSON object"},
		{"truncated json", build(`{"a":{"dtype"`, nil), "header"},
		{"trailing garbage", build(`{}x`, nil), "after the JSON object"},
		{"unknown dtype", build(`{"a":{"dtype":"F13","shape":[1],"data_offsets":[0,4]}}`, f4), "unknown dtype"},
		{"unknown field", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, f4), "unknown field"},
		{"missing shape", build(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, f4), "missing shape"},
		{"negative dim", build(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, f4), "header"},
		{"one offset", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}`, f4), "data_offsets must be"},
		{"reversed offsets", build(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, f4), "end before"},
		{"offset out of range", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f4), "run past"},
		{"shape size mismatch", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, f4), "needs 8 bytes"},
		{"huge shape", build(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}}`, f4), "too large"},
		{"duplicate name", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f4), "duplicate"},
		{"overlap", build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, append(f4, f4...)), "overlaps"},
		{"gap", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, append(f4, f4...)), "gap"},
		{"leftover data", build(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, append(f4, f4...)), "after the last tensor"},
		{"bad metadata", build(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
		{"empty name", build(`{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f4), "empty name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.file)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			path := filepath.Join(t.TempDir(), "bad.safetensors")
			os.WriteFile(path, tc.file, 0o644)
			if r, err := Open(path); err == nil {
				r.Close()
				t.Error("Open accepted it")
			}
		})
	}
}

func TestWriteRejects(t *testing.T) {
	good := mustF32(t, "a", []int{1}, []float32{1})
	tests := []struct {
		name    string
		tensors []Tensor
	}{
		{"duplicate", []Tensor{good, good}},
		{"size mismatch", []Tensor{{Name: "x", DType: F32, Shape: []int{2}, Data: make([]byte, 4)}}},
		{"bad dtype", []Tensor{{Name: "x", DType: "F7", Shape: []int{1}, Data: make([]byte, 4)}}},
		{"reserved name", []Tensor{{Name: metadataKey, DType: F32, Shape: []int{1}, Data: make([]byte, 4)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Write(&bytes.Buffer{}, tc.tensors, nil); err == nil {
				t.Error("no error")
			}
		})
	}
}

// FuzzRead checks that no input makes the reader panic, and that whatever
// it accepts survives a write/read round trip.
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	x, _ := FromFloat32s("w", []int{2}, []float32{1, 2})
	Write(&buf, []Tensor{x}, map[string]string{"k": "v"})
	f.Add(buf.Bytes())
	f.Add(build(`{"a":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 0x3c}))
	f.Add(build(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '})
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Read(b)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, file.Tensors, file.Metadata); err != nil {
			t.Fatalf("accepted file does not write back: %v", err)
		}
		back, err := Read(out.Bytes())
		if err != nil {
			t.Fatalf("written file does not read back: %v", err)
		}
		for _, x := range file.Tensors {
			y, ok := back.Get(x.Name)
			if !ok || !bytes.Equal(x.Data, y.Data) || x.DType != y.DType {
				t.Fatalf("tensor %q changed in the round trip", x.Name)
			}
			if x.DType == F16 || x.DType == BF16 || x.DType == F32 || x.DType == F64 {
				if _, err := x.Float32s(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
