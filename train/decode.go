package train

import (
	"context"
	"fmt"
	"math"
	"sort"

	"compbench/models"
	"compbench/progress"
)

// DecodeOptions control greedy and beam decoding.
type DecodeOptions struct {
	// Beam is the beam size; 1 is greedy decoding.
	Beam int
	// Alpha is the GNMT length penalty exponent (Wu et al. 2016):
	// scores are log P / ((5+|y|)^alpha / 6^alpha). Shi et al. use 0.6.
	Alpha float64
	// MaxLen bounds the generated tokens, EOS included.
	MaxLen int
	// Batch is the number of examples decoded together.
	Batch int
	// Width rounds padded lengths, as in training.
	Width int
}

// Hypothesis is one decoded sequence.
type Hypothesis struct {
	// IDs are the target ids, without EOS.
	IDs []int
	// Score is the total log-probability (greedy) or the length-normalised
	// one (beam).
	Score float64
}

// Decoded is the result for one example, best hypothesis first.
type Decoded struct {
	// Hyps holds one hypothesis (greedy) or up to Beam, best first.
	Hyps []Hypothesis
}

// Decode decodes every example, in input order; padding and <unk> are
// never produced. bar may be nil.
func Decode(ctx context.Context, m models.Seq2Seq, ex []models.Example, o DecodeOptions, bar *progress.Bar) ([]Decoded, error) {
	if o.Beam < 1 || o.MaxLen < 1 || o.Batch < 1 || o.Width < 1 {
		return nil, fmt.Errorf("decode: beam %d, max length %d, batch %d, width %d must be >= 1", o.Beam, o.MaxLen, o.Batch, o.Width)
	}
	// Batched by source length alone: the targets play no part in
	// decoding, so each batch is as full as the sources allow.
	src := make([]models.Example, len(ex))
	pos := make(map[*models.Example]int, len(ex))
	for i := range ex {
		src[i] = models.Example{ID: ex[i].ID, Src: ex[i].Src, Tgt: []int{models.EOSID}}
		pos[&src[i]] = i
	}
	out := make([]Decoded, len(ex))
	// Batches are padded to their row limit, so a limit above the number
	// of examples would only allocate padding (--batch 30000 on 20
	// examples took 5 GB).
	rows := max(1, min(o.Batch, len(ex)))
	for _, bt := range models.Batches(src, rows, 0, o.Width, nil) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mem, err := m.Encode(bt.Src, bt.B, bt.S)
		if err != nil {
			return nil, err
		}
		var res []Decoded
		if o.Beam == 1 {
			res, err = greedy(m, mem, len(bt.Rows), o)
		} else {
			res, err = beam(m, mem, len(bt.Rows), o)
		}
		if err != nil {
			return nil, err
		}
		for i, e := range bt.Rows {
			out[pos[e]] = res[i]
		}
		if bar != nil {
			bar.Add(int64(len(bt.Rows)))
		}
	}
	return out, nil
}

// logSoftmax turns logits in place into log-probabilities.
func logSoftmax(x []float32) {
	mx := x[0]
	for _, v := range x {
		mx = max(mx, v)
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v - mx))
	}
	l := float32(math.Log(s)) + mx
	for i := range x {
		x[i] -= l
	}
}

// startDecode uses the model's incremental decoder when it has one, and
// otherwise re-runs Logits over each whole prefix.
func startDecode(m models.Seq2Seq, mem *models.Memory, o DecodeOptions) (models.DecodeState, error) {
	if st, ok := m.(models.Stepper); ok {
		return st.StartDecode(mem, o.MaxLen)
	}
	return &prefixState{m: m, mem: mem, width: o.Width, hist: make([][]int, mem.B)}, nil
}

// prefixState is a DecodeState over Seq2Seq.Logits.
type prefixState struct {
	m     models.Seq2Seq
	mem   *models.Memory
	width int
	hist  [][]int
}

func (p *prefixState) Step(tokens []int) ([]float32, error) {
	for b, t := range tokens {
		p.hist[b] = append(p.hist[b], t)
	}
	n := len(p.hist[0])
	T := models.RoundUp(n, p.width)
	in := make([]int, len(p.hist)*T)
	for b, h := range p.hist {
		copy(in[b*T:(b+1)*T], h)
	}
	return p.m.Logits(p.mem, in, T, n-1)
}

func (p *prefixState) Reorder(from []int) {
	old := p.hist
	p.hist = make([][]int, len(old))
	for i, f := range from {
		p.hist[i] = append([]int(nil), old[f]...)
	}
}

func greedy(m models.Seq2Seq, mem *models.Memory, n int, o DecodeOptions) ([]Decoded, error) {
	st, err := startDecode(m, mem, o)
	if err != nil {
		return nil, err
	}
	prefix := make([][]int, mem.B)
	score := make([]float64, mem.B)
	done := make([]bool, mem.B)
	tokens := make([]int, mem.B)
	for b := range tokens {
		tokens[b] = models.StartID
		done[b] = b >= n
	}
	for t := 0; t < o.MaxLen; t++ {
		ids, lps, err := greedyStep(st, tokens)
		if err != nil {
			return nil, err
		}
		all := true
		for b := 0; b < mem.B; b++ {
			if done[b] {
				tokens[b] = models.EOSID
				continue
			}
			best := ids[b]
			score[b] += lps[b]
			tokens[b] = best
			if best == models.EOSID {
				done[b] = true
				continue
			}
			prefix[b] = append(prefix[b], best)
			all = false
		}
		if all {
			break
		}
	}
	out := make([]Decoded, n)
	for b := range out {
		out[b] = Decoded{Hyps: []Hypothesis{{IDs: prefix[b], Score: score[b]}}}
	}
	return out, nil
}

// greedyStep feeds tokens and returns each row's greedy choice and its
// log-probability: chosen on the device when the state can (models.Picker),
// otherwise from the downloaded logits.
func greedyStep(st models.DecodeState, tokens []int) ([]int, []float64, error) {
	if pk, ok := st.(models.Picker); ok {
		return pk.StepGreedy(tokens)
	}
	logits, err := st.Step(tokens)
	if err != nil {
		return nil, nil, err
	}
	B := len(tokens)
	v := len(logits) / B
	ids, lps := make([]int, B), make([]float64, B)
	for b := range ids {
		row := logits[b*v : (b+1)*v]
		logSoftmax(row)
		best := models.EOSID
		for k := range row {
			if row[k] > row[best] && k != models.PadID && k != models.UnkID {
				best = k
			}
		}
		ids[b], lps[b] = best, float64(row[best])
	}
	return ids, lps, nil
}

// lengthPenalty is GNMT's ((5+n)/6)^alpha.
func lengthPenalty(n int, alpha float64) float64 {
	return math.Pow((5+float64(n))/6, alpha)
}

type beamHyp struct {
	ids  []int
	logp float64
}

// beam runs beam search for the n real rows of mem, K hypotheses each.
// An example stops when it has K finished hypotheses and no live one can
// still beat the worst of them: a live score is at most logp / lp(MaxLen),
// since log P only falls and the penalty only grows.
func beam(m models.Seq2Seq, mem *models.Memory, n int, o DecodeOptions) ([]Decoded, error) {
	K := o.Beam
	bm := mem.Repeat(K)
	live := make([][]beamHyp, mem.B)
	fin := make([][]Hypothesis, mem.B)
	stopped := make([]bool, mem.B)
	for b := range live {
		live[b] = []beamHyp{{}}
		stopped[b] = b >= n
	}
	bound := lengthPenalty(o.MaxLen, o.Alpha)
	st, err := startDecode(m, bm, o)
	if err != nil {
		return nil, err
	}
	tokens := make([]int, bm.B)
	for i := range tokens {
		tokens[i] = models.StartID
	}
	from := make([]int, bm.B)
	// On a device (models.Picker) only the K+1 best tokens of each row
	// come back: an example's next beam takes at most K tokens that are
	// not EOS plus one EOS from any one row, so no row contributes more
	// than K+1 candidates before the beam fills.
	pk, _ := st.(models.Picker)
	var logits, topLP []float32
	var topIDs []int
	for t := 0; t < o.MaxLen; t++ {
		var err error
		if pk != nil {
			topIDs, topLP, err = pk.StepTopK(tokens, K+1)
		} else {
			logits, err = st.Step(tokens)
		}
		if err != nil {
			return nil, err
		}
		v := len(logits) / bm.B
		for i := range from {
			from[i] = i
		}
		active := false
		for b := range live {
			if stopped[b] {
				continue
			}
			type cand struct {
				k, tok int
				logp   float64
			}
			var cs []cand
			for k, h := range live[b] {
				if pk != nil {
					r := (b*K + k) * (K + 1)
					for j := r; j < r+K+1 && topIDs[j] >= 0; j++ {
						cs = append(cs, cand{k, topIDs[j], h.logp + float64(topLP[j])})
					}
					continue
				}
				row := logits[(b*K+k)*v : (b*K+k+1)*v]
				logSoftmax(row)
				for tok := range row {
					if tok == models.PadID || tok == models.UnkID {
						continue
					}
					cs = append(cs, cand{k, tok, h.logp + float64(row[tok])})
				}
			}
			sort.SliceStable(cs, func(i, j int) bool { return cs[i].logp > cs[j].logp })
			var next []beamHyp
			for _, c := range cs {
				if len(next) == K {
					break
				}
				ids := append(append([]int(nil), live[b][c.k].ids...), c.tok)
				if c.tok == models.EOSID {
					if len(fin[b]) < K || c.logp/lengthPenalty(len(ids), o.Alpha) > fin[b][len(fin[b])-1].Score {
						fin[b] = addFinished(fin[b], Hypothesis{IDs: ids[:len(ids)-1], Score: c.logp / lengthPenalty(len(ids), o.Alpha)}, K)
					}
					continue
				}
				from[b*K+len(next)] = b*K + c.k
				tokens[b*K+len(next)] = c.tok
				next = append(next, beamHyp{ids: ids, logp: c.logp})
			}
			live[b] = next
			if len(fin[b]) == K && (len(next) == 0 || next[0].logp/bound < fin[b][K-1].Score) {
				stopped[b] = true
				continue
			}
			active = true
		}
		if !active {
			break
		}
		st.Reorder(from)
	}
	out := make([]Decoded, n)
	for b := range out {
		f := fin[b]
		for _, h := range live[b] {
			if len(f) >= K {
				break
			}
			f = addFinished(f, Hypothesis{IDs: h.ids, Score: h.logp / lengthPenalty(len(h.ids), o.Alpha)}, K)
		}
		out[b] = Decoded{Hyps: f}
	}
	return out, nil
}

// addFinished inserts h keeping the list sorted by score, at most K long.
func addFinished(f []Hypothesis, h Hypothesis, K int) []Hypothesis {
	i := sort.Search(len(f), func(i int) bool { return f[i].Score < h.Score })
	f = append(f, Hypothesis{})
	copy(f[i+1:], f[i:])
	f[i] = h
	if len(f) > K {
		f = f[:K]
	}
	return f
}
