package models

import (
	"math"
	"math/rand/v2"

	"compbench/kernels"
	"compbench/vecmath"
)

// lstmPass is one forward pass of an LSTM model over a batch, keeping
// what its backward pass needs. Sequences are time-major inside the
// recurrences (xs[t] [B, In]) and batch-major for attention (row b*T+t).
type lstmPass struct {
	m    *LSTM
	rng  *rand.Rand // lstm-copy's word dropout; nil: none
	drop bool       // dropout on (training)
	step int        // the training step, which picks the dropout masks

	B, S, T int
	src     []int // [B*S]
	embIDs  []int // [B*S] source ids as embedded (word dropout)
	srcLen  []int // [B]

	srcDrop   [][]float32   // [S][B*H] embedding dropout masks
	encRuns   [][2]*lstmRun // [layer][direction]
	encInDrop [][][]float32 // [layer][S][B*2H] masks on inputs of layers > 0
	tenc      *tEncCache    // the Transformer encoder's state (lstm_tenc.go)
	mem       []float32     // [B*S, W] encoder output (W: LSTM.memW)
	keys      []float32     // [B*S, H] mem·Wk

	decIDs    []int         // [B*T] decoder inputs, copy ids read as UNK
	tgtX      [][]float32   // [T][B*H] decoder input embeddings after dropout
	tgtDrop   [][]float32   // [T][B*H]
	decRuns   []*lstmRun    // [layer]
	decInDrop [][][]float32 // [layer][T][B*H]
	hd        []float32     // [B*T, H] top decoder states

	rows   []int     // [R] query rows, indices into B*T
	hq     []float32 // [R, H] decoder states of the query rows
	q      []float32 // [R, H] hq·Wq + b (the attention bias)
	att    []float32 // [R, S] attention weights (0 beyond the source)
	o      []float32 // [R, H+W] [h; ctx] after dropout
	oDrop  []float32 // [R, H+W]
	logits []float32 // [R, V]
	gin    []float32 // [R, 2H+W] copy gate input [o; embedding]
	pgen   []float32 // [R] generation probability

	attU []float32 // [R, S, H] tanh(q + k + b) kept for backward; nil: recomputed
	// keepAttU asks the forward pass to keep attU (a training pass).
	keepAttU bool

	dLogits  []float32 // [R, V] seeds of the backward pass
	dPgen    []float32 // [R]
	dAttCopy []float32 // [R, S]
}

// copyUnkRate is the share of source tokens lstm-copy embeds as <unk>
// while training (only when dropout is on).
const copyUnkRate = 0.1

// Dropout sites: each names one mask per training step, drawn by
// kernels.DropoutRef from the model's seed, the site and the step, so the
// engine's kernels (models/engine_lstm.go) draw the same masks. Masks over
// a sequence cover its time-major buffer [T*B, width] in one draw.
const (
	dropSrcEmb = 0    // source embeddings [S*B, H]
	dropEncIn  = 1000 // + l: inputs of encoder layer l > 0 [S*B, 2H]
	dropTgtEmb = 2000 // decoder input embeddings [T*B, H]
	dropDecIn  = 3000 // + l: inputs of decoder layer l > 0 [T*B, H]
	dropOut    = 4000 // [h; ctx] of every decoder position, time-major [T*B, H+W]
	dropTEnc   = 5000 // + 4l + k: the Transformer encoder's four sites of layer l
)

// dropout applies site's mask to x in place and returns the mask (nil
// when dropout is off).
func (f *lstmPass) dropout(site int, x []float32) []float32 {
	if !f.drop {
		return nil
	}
	mask := make([]float32, len(x))
	p := kernels.DropoutParams{P: float32(f.m.Cfg.Dropout), Seed: f.m.seed, ID: site, Step: uint64(f.step)}
	kernels.DropoutRef(len(x), p, x, x, mask)
	return mask
}

// splitRows cuts a time-major buffer (or mask) into its n steps; a nil
// buffer gives n nil steps.
func splitRows(buf []float32, n int) [][]float32 {
	out := make([][]float32, n)
	if buf == nil {
		return out
	}
	w := len(buf) / n
	for t := range out {
		out[t] = buf[t*w : (t+1)*w : (t+1)*w]
	}
	return out
}

func applyMask(dx, mask []float32) {
	if mask == nil {
		return
	}
	for i := range dx {
		dx[i] *= mask[i]
	}
}

// encode runs the bidirectional encoder stack and sets mem and keys.
func (f *lstmPass) encode(src []int, B, S int, srcLen []int) {
	m, H := f.m, f.m.Cfg.Dim
	f.B, f.S, f.src, f.srcLen = B, S, src, srcLen
	emb := m.p.Data(m.srcEmb)
	f.embIDs = src
	if m.Copy && f.rng != nil {
		// Word dropout for copying: tokens unseen in training reach the
		// encoder as <unk>, so training shows it <unk> positions whose
		// tokens are still to be copied (the copy targets keep the real
		// ids).
		f.embIDs = append([]int(nil), src...)
		for i, id := range f.embIDs {
			if id != PadID && f.rng.Float64() < copyUnkRate {
				f.embIDs[i] = UnkID
			}
		}
	}
	if m.tenc != nil {
		f.encodeTransformer()
		f.keys = make([]float32, B*S*H) // [B*S, H]
		gemm(false, false, B*S, H, H, 1, f.mem, m.p.Data(m.wk), 0, f.keys)
		return
	}
	masks := make([][]float32, S)
	xall := make([]float32, S*B*H) // [S*B, H] time-major
	xs := splitRows(xall, S)
	for t := 0; t < S; t++ {
		masks[t] = make([]float32, B)
		for b := 0; b < B; b++ {
			if t < srcLen[b] {
				masks[t][b] = 1
			}
			id := f.embIDs[b*S+t]
			copy(xs[t][b*H:(b+1)*H], emb[id*H:(id+1)*H])
		}
	}
	f.srcDrop = splitRows(f.dropout(dropSrcEmb, xall), S)
	in := H
	f.encRuns = make([][2]*lstmRun, len(m.enc))
	f.encInDrop = make([][][]float32, len(m.enc))
	for l, c := range m.enc {
		hf, rf := runLSTM(m.p.Data(c[0].w), m.p.Data(c[0].b), in, H, xs, masks, false)
		hb, rb := runLSTM(m.p.Data(c[1].w), m.p.Data(c[1].b), in, H, xs, masks, true)
		f.encRuns[l] = [2]*lstmRun{rf, rb}
		nextAll := make([]float32, S*B*2*H) // [S*B, 2H] time-major
		next := splitRows(nextAll, S)
		for t := 0; t < S; t++ {
			for b := 0; b < B; b++ {
				copy(next[t][b*2*H:], hf[t][b*H:(b+1)*H])
				copy(next[t][b*2*H+H:], hb[t][b*H:(b+1)*H])
			}
		}
		if l+1 < len(m.enc) {
			f.encInDrop[l+1] = splitRows(f.dropout(dropEncIn+l+1, nextAll), S)
		}
		xs, in = next, 2*H
	}
	f.mem = make([]float32, B*S*2*H) // [B*S, 2H]
	for t := 0; t < S; t++ {
		for b := 0; b < B; b++ {
			copy(f.mem[(b*S+t)*2*H:(b*S+t+1)*2*H], xs[t][b*2*H:(b+1)*2*H])
		}
	}
	f.keys = make([]float32, B*S*H) // [B*S, H]
	gemm(false, false, B*S, H, 2*H, 1, f.mem, m.p.Data(m.wk), 0, f.keys)
}

// decode runs the decoder stack over decIn [B*T] and the attention and
// output layer for the query rows.
func (f *lstmPass) decode(decIn []int, T int, rows []int) {
	m, H, B, S, V := f.m, f.m.Cfg.Dim, f.B, f.S, f.m.Cfg.TgtVocab
	if f.keys == nil {
		f.keys = make([]float32, B*S*H) // [B*S, H]
		gemm(false, false, B*S, H, m.memW, 1, f.mem, m.p.Data(m.wk), 0, f.keys)
	}
	f.T, f.rows = T, rows
	f.decIDs = make([]int, B*T)
	emb := m.p.Data(m.tgtEmb)
	xall := make([]float32, T*B*H) // [T*B, H] time-major
	xs := splitRows(xall, T)
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			id := decIn[b*T+t]
			if id >= V {
				id = UnkID // a copied token enters the decoder as UNK
			}
			f.decIDs[b*T+t] = id
			copy(xs[t][b*H:(b+1)*H], emb[id*H:(id+1)*H])
		}
	}
	f.tgtDrop = splitRows(f.dropout(dropTgtEmb, xall), T)
	f.tgtX = xs
	f.decRuns = make([]*lstmRun, len(m.dec))
	f.decInDrop = make([][][]float32, len(m.dec))
	for l, c := range m.dec {
		hs, run := runLSTM(m.p.Data(c.w), m.p.Data(c.b), H, H, xs, nil, false)
		f.decRuns[l] = run
		if l+1 < len(m.dec) {
			f.decInDrop[l+1] = make([][]float32, T)
			if f.drop {
				all := append([]float32(nil), run.hs...) // [T*B, H]; keeps the run's states intact
				f.decInDrop[l+1] = splitRows(f.dropout(dropDecIn+l+1, all), T)
				hs = splitRows(all, T)
			}
		}
		xs = hs
	}
	f.hd = make([]float32, B*T*H) // [B*T, H]
	for t := 0; t < T; t++ {
		for b := 0; b < B; b++ {
			copy(f.hd[(b*T+t)*H:(b*T+t+1)*H], xs[t][b*H:(b+1)*H])
		}
	}
	f.attendOutput()
}

// attendOutput computes attention, output logits and the copy gate for
// the query rows from the top decoder states hd.
func (f *lstmPass) attendOutput() {
	m, H, S, V, T, rows := f.m, f.m.Cfg.Dim, f.S, f.m.Cfg.TgtVocab, f.T, f.rows
	W := m.memW
	O, Gn := H+W, 2*H+W // widths of [h; ctx] and of the gate input
	R := len(rows)
	f.hq = make([]float32, R*H) // [R, H]
	for r, row := range rows {
		copy(f.hq[r*H:(r+1)*H], f.hd[row*H:(row+1)*H])
	}
	f.q = make([]float32, R*H) // [R, H]
	gemm(false, false, R, H, H, 1, f.hq, m.p.Data(m.wq), 0, f.q)
	f.att = make([]float32, R*S) // [R, S]
	f.o = make([]float32, R*O)   // [R, H+W]
	va, ba := m.p.Data(m.va), m.p.Data(m.ba)
	qb := f.q // [R, H] q + b: the bias joins the query once per row
	for r := 0; r < R; r++ {
		for i, v := range ba {
			qb[r*H+i] += v
		}
	}
	f.attU = nil
	if f.keepAttU {
		if R*S*H <= attUMax {
			f.attU = make([]float32, R*S*H) // [R, S, H]
		}
	}
	scratch := make([]float32, S*H) // [S, H]
	for r, row := range rows {
		b := row / T
		n := f.srcLen[b]
		a := f.att[r*S : r*S+n]
		qr := qb[r*H : (r+1)*H]
		u := scratch
		if f.attU != nil {
			u = f.attU[r*S*H : (r+1)*S*H]
		}
		attScores(a, qr, f.keys[b*S*H:(b*S+n)*H], va, u)
		softmaxInPlace(a)
		or := f.o[r*O : (r+1)*O]
		copy(or, f.hq[r*H:(r+1)*H])
		ctx := or[H:]
		for j := 0; j < n; j++ {
			mj := f.mem[(b*S+j)*W : (b*S+j+1)*W]
			for i := range ctx {
				ctx[i] += a[j] * mj[i]
			}
		}
	}
	f.dropOutput()
	f.logits = make([]float32, R*V) // [R, V]
	ob := m.p.Data(m.outB)
	for r := 0; r < R; r++ {
		copy(f.logits[r*V:(r+1)*V], ob)
	}
	gemm(false, false, R, V, O, 1, f.o, m.p.Data(m.outW), 1, f.logits)
	if !m.Copy {
		return
	}
	f.gin = make([]float32, R*Gn) // [R, 2H+W]
	f.pgen = make([]float32, R)
	gw, gb := m.p.Data(m.gateW), m.p.Data(m.gateB)[0]
	for r, row := range rows {
		g := f.gin[r*Gn : (r+1)*Gn]
		copy(g, f.o[r*O:(r+1)*O])
		t, b := row%T, row/T
		copy(g[O:], f.tgtX[t][b*H:(b+1)*H])
		z := gb
		for i, v := range g {
			z += v * gw[i]
		}
		f.pgen[r] = vecmath.Sigmoid(z)
	}
}

// dropOutput applies dropout to o, whose rows are every decoder position
// (training) in batch-major order, with the mask of their time-major order.
func (f *lstmPass) dropOutput() {
	if !f.drop {
		f.oDrop = nil
		return
	}
	B, T, R := f.B, f.T, len(f.rows)
	if R != B*T {
		panic("lstm: dropout on a subset of the decoder positions")
	}
	O := len(f.o) / R
	tm := make([]float32, R*O) // [T*B, H+W]
	at := func(row int) int { return (row%T)*B + row/T }
	for r, row := range f.rows {
		copy(tm[at(row)*O:(at(row)+1)*O], f.o[r*O:(r+1)*O])
	}
	mask := f.dropout(dropOut, tm)
	f.oDrop = make([]float32, R*O) // [R, H+W]
	for r, row := range f.rows {
		copy(f.o[r*O:(r+1)*O], tm[at(row)*O:(at(row)+1)*O])
		copy(f.oDrop[r*O:(r+1)*O], mask[at(row)*O:(at(row)+1)*O])
	}
}

// attUMax caps the floats of attU: larger attention activations are
// recomputed in the backward pass instead of kept (a variable for tests).
var attUMax = 1 << 25

// attScores sets a[j] = v·tanh(qb + k_j) for qb = q + b and the n keys
// k_j (rows of keys [n, H]); u [n, H] receives the tanh.
func attScores(a, qb, keys, va, u []float32) {
	H := len(qb)
	for j := range a {
		k, uj := keys[j*H:(j+1)*H], u[j*H:(j+1)*H]
		for i, q := range qb {
			uj[i] = q + k[i]
		}
	}
	vecmath.TanhSlice(u[:len(a)*H])
	for j := range a {
		uj := u[j*H : (j+1)*H]
		var e float32
		for i, t := range uj {
			e += va[i] * t
		}
		a[j] = e
	}
}

func softmaxInPlace(x []float32) { kernels.SoftmaxRowRef(x) }

// copyMatch calls fn for each source position of row b whose token the
// extended target id y stands for (see LSTM).
func (f *lstmPass) copyMatch(b, y int, fn func(j int)) {
	V, S := f.m.Cfg.TgtVocab, f.S
	n := f.srcLen[b]
	if y < V {
		for j := 0; j < n; j++ {
			if f.m.srcToTgt[f.src[b*S+j]] == y {
				fn(j)
			}
		}
		return
	}
	j0 := y - V
	if j0 >= n {
		return
	}
	s0 := f.src[b*S+j0]
	for j := 0; j < n; j++ {
		if j == j0 || (s0 != UnkID && f.src[b*S+j] == s0) {
			fn(j)
		}
	}
}

// loss is the mean token loss over the non-padding targets [B*T] (every
// decoder position a query row); with grads it seeds the backward pass.
func (f *lstmPass) loss(tgt []int, eps float32, grads bool) float64 {
	V, S, R := f.m.Cfg.TgtVocab, f.S, len(f.rows)
	n := 0
	for _, y := range tgt {
		if y != PadID {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	f.dLogits = make([]float32, R*V)
	if f.m.Copy {
		f.dPgen, f.dAttCopy = make([]float32, R), make([]float32, R*S)
	}
	var tot float64
	p := make([]float32, V)
	for r := 0; r < R; r++ {
		y := tgt[f.rows[r]]
		if y == PadID {
			continue
		}
		copy(p, f.logits[r*V:(r+1)*V])
		softmaxInPlace(p)
		d := f.dLogits[r*V : (r+1)*V]
		if !f.m.Copy {
			yy := y
			if yy >= V {
				yy = UnkID // a copy id, meaningless without copying
			}
			var lsum float64
			for k := range p {
				lsum += math.Log(math.Max(float64(p[k]), 1e-30))
				d[k] = (p[k] - eps/float32(V)) / float32(n)
			}
			tot -= float64(1-eps)*math.Log(math.Max(float64(p[yy]), 1e-30)) + float64(eps)/float64(V)*lsum
			d[yy] -= (1 - eps) / float32(n)
			continue
		}
		b, pg := f.rows[r]/f.T, f.pgen[r]
		var gen, cm float32
		if y < V {
			gen = p[y]
		}
		f.copyMatch(b, y, func(j int) { cm += f.att[r*S+j] })
		P := pg*gen + (1-pg)*cm
		if P < 1e-30 {
			tot -= math.Log(1e-30)
			continue
		}
		tot -= math.Log(float64(P))
		dP := -1 / (P * float32(n))
		f.dPgen[r] = dP * (gen - cm)
		if y < V {
			dg := dP * pg * gen
			for k := range p {
				d[k] = -dg * p[k]
			}
			d[y] += dg
		}
		f.copyMatch(b, y, func(j int) { f.dAttCopy[r*S+j] += dP * (1 - pg) })
	}
	return tot / float64(n)
}

// extendedLogProbs is the copy model's log P over target ids then source
// positions, [R, V+S]; merged or impossible entries get -1e30.
func (f *lstmPass) extendedLogProbs() []float32 {
	V, S, R := f.m.Cfg.TgtVocab, f.S, len(f.rows)
	out := make([]float32, R*(V+S))
	for r, row := range f.rows {
		b, pg := row/f.T, f.pgen[r]
		pr := out[r*(V+S) : (r+1)*(V+S)]
		copy(pr, f.logits[r*V:(r+1)*V])
		softmaxInPlace(pr[:V])
		for k := 0; k < V; k++ {
			pr[k] *= pg
		}
		for j := 0; j < f.srcLen[b]; j++ {
			s := f.src[b*S+j]
			mass := (1 - pg) * f.att[r*S+j]
			if t := f.m.srcToTgt[s]; t >= 0 {
				pr[t] += mass
				continue
			}
			first := j
			if s != UnkID {
				for k := 0; k < j; k++ {
					if f.src[b*S+k] == s {
						first = k
						break
					}
				}
			}
			pr[V+first] += mass
		}
		for k, v := range pr {
			if v > 0 {
				pr[k] = float32(math.Log(float64(v)))
			} else {
				pr[k] = -1e30
			}
		}
	}
	return out
}
