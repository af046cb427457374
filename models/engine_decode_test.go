package models

import (
	"math"
	"testing"
)

func TestRepeatOf(t *testing.T) {
	orig := &Memory{B: 2, S: 2, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8}, SrcLen: []int{2, 1}}
	changed := orig.Repeat(2)
	changed.Data[9] = -1
	lens := orig.Repeat(2)
	lens.SrcLen[3] = 2
	for _, c := range []struct {
		name string
		mem  *Memory
		want bool
	}{
		{"itself", orig, true},
		{"repeated twice", orig.Repeat(2), true},
		{"repeated three times", orig.Repeat(3), true},
		{"one value changed", changed, false},
		{"one length changed", lens, false},
		{"other source length", &Memory{B: 2, S: 1, Data: orig.Data[:4], SrcLen: []int{1, 1}}, false},
		{"fewer rows", &Memory{B: 1, S: 2, Data: orig.Data[:4], SrcLen: []int{2}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := repeatOf(c.mem, orig); got != c.want {
				t.Fatalf("repeatOf = %v, want %v", got, c.want)
			}
		})
	}
}

// TestEngineDecodeMemory: decoding starts from the encoder output Encode
// left on the backend (also for its beam repeats), uploads any other
// memory, and decodes the same either way.
func TestEngineDecodeMemory(t *testing.T) {
	m, _, ex := tinyModel(t, "relative", tinyRecords())
	bt := MakeBatch([]*Example{&ex[0], &ex[1], &ex[2]}, 4, 4)
	em, err := NewEngineModel(m, leakCheckedCPU(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer em.Close()
	mem, err := em.Encode(bt.Src, bt.B, bt.S)
	if err != nil {
		t.Fatal(err)
	}
	encoded := &em.enc.buf.([]float32)[0]
	other := &Memory{B: mem.B, S: mem.S, Data: append([]float32(nil), mem.Data...), SrcLen: mem.SrcLen}
	other.Data[0] += 1e-3
	for _, c := range []struct {
		name    string
		mem     *Memory
		onDev   bool
		distinc int
	}{
		{"encoded", mem, true, mem.B},
		{"beam repeat", mem.Repeat(3), true, mem.B},
		{"other values", other, false, other.B},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := em.StartDecode(c.mem, 3)
			if err != nil {
				t.Fatal(err)
			}
			buf, rows, err := st.(*engineDecoder).memory(c.mem)
			if err != nil {
				t.Fatal(err)
			}
			if onDev := &buf.([]float32)[0] == encoded; onDev != c.onDev || rows != c.distinc {
				t.Fatalf("encoder output reused %v with %d distinct rows, want %v and %d", onDev, rows, c.onDev, c.distinc)
			}
			// The same logits as the CPU decoder.
			cs, err := m.StartDecode(c.mem, 3)
			if err != nil {
				t.Fatal(err)
			}
			toks := make([]int, c.mem.B)
			for i := range toks {
				toks[i] = StartID
			}
			for step := 0; step < 3; step++ {
				want, err := cs.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				got, err := st.Step(toks)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 1e-5 {
						t.Fatalf("step %d: logit %d is %v, the CPU decoder gives %v", step, i, got[i], want[i])
					}
				}
			}
		})
	}
	t.Run("evicted encode program", func(t *testing.T) {
		em.m.MaxGraphs = 1
		if _, err := em.Loss(bt, false, 0, 0); err != nil { // evicts the encode program
			t.Fatal(err)
		}
		st, err := em.StartDecode(mem, 3)
		if err != nil {
			t.Fatal(err)
		}
		if buf, _, err := st.(*engineDecoder).memory(mem); err != nil || &buf.([]float32)[0] == encoded {
			t.Fatalf("memory of an evicted program reused (err %v)", err)
		}
	})
}
