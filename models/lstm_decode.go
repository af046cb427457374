package models

import "strconv"

// decodeCache keeps the decoder states of the last Logits call, so that
// decoding the next position (greedy, or beam search with its rows
// reordered) costs one LSTM step instead of a rerun over the prefix.
type decodeCache struct {
	mem  *Memory        // held, so its address is not reused while cached
	pos  int            // the states follow decoder inputs 0..pos
	rows map[string]int // prefix of inputs 0..pos -> row of h, c
	h, c [][]float32    // [layer][B*H]
	keys []float32      // [B*S, H] attention keys of mem
}

func prefixKey(ids []int) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, ' ')
	}
	return string(b)
}

// keepStates caches the states of a full decoder run over positions 0..pos.
func (m *LSTM) keepStates(mem *Memory, decIn []int, T, pos int, f *lstmPass) {
	c := &decodeCache{mem: mem, pos: pos, rows: map[string]int{}, keys: f.keys}
	for _, run := range f.decRuns {
		c.h, c.c = append(c.h, run.lastH), append(c.c, run.lastC)
	}
	for b := 0; b < mem.B; b++ {
		c.rows[prefixKey(decIn[b*T:b*T+pos+1])] = b
	}
	m.cache = c
}

// stepLogits answers Logits from the cache when every row's inputs
// 0..pos-1 were decoded by the previous call; ok is false otherwise.
func (m *LSTM) stepLogits(mem *Memory, decIn []int, T, pos int) (out []float32, ok bool) {
	c := m.cache
	if c == nil || c.mem != mem || pos != c.pos+1 {
		return nil, false
	}
	B, H, V := mem.B, m.Cfg.Dim, m.Cfg.TgtVocab
	from := make([]int, B)
	for b := range from {
		r, found := c.rows[prefixKey(decIn[b*T:b*T+pos])]
		if !found {
			return nil, false
		}
		from[b] = r
	}
	emb := m.p.Data(m.tgtEmb)
	x := make([]float32, B*H) // [B, H]
	for b := 0; b < B; b++ {
		id := decIn[b*T+pos]
		if id >= V {
			id = UnkID
		}
		copy(x[b*H:(b+1)*H], emb[id*H:(id+1)*H])
	}
	f := &lstmPass{m: m, B: B, S: mem.S, T: 1, src: mem.Src, mem: mem.Data, srcLen: mem.SrcLen, keys: c.keys,
		tgtX: [][]float32{x}, rows: make([]int, B)}
	next := &decodeCache{mem: mem, pos: pos, rows: map[string]int{}, keys: c.keys}
	in := x
	for l, cell := range m.dec {
		hp, cp := make([]float32, B*H), make([]float32, B*H) // [B, H]
		for b, r := range from {
			copy(hp[b*H:(b+1)*H], c.h[l][r*H:(r+1)*H])
			copy(cp[b*H:(b+1)*H], c.c[l][r*H:(r+1)*H])
		}
		h, cc, _ := lstmForward(m.p.Data(cell.w), m.p.Data(cell.b), H, H, in, hp, cp, nil)
		next.h, next.c = append(next.h, h), append(next.c, cc)
		in = h
	}
	f.hd = in
	for b := range f.rows {
		f.rows[b] = b
		next.rows[prefixKey(decIn[b*T:b*T+pos+1])] = b
	}
	f.attendOutput()
	m.cache = next
	if !m.Copy {
		return f.logits, true
	}
	return f.extendedLogProbs(), true
}
