package lstm

import (
	"math"

	"compbench/kernels"
	"compbench/models"
)

// copyMatch calls fn for each source position j < n of a row with source
// ids src whose token the extended target id y stands for (see LSTM): a
// target id matches the positions holding that token, an extended id
// V+j0 matches j0 and the other positions holding its (known) token.
func (m *Model) copyMatch(src []int, n, y int, fn func(j int)) {
	V := m.Cfg.TgtVocab
	if y < V {
		for j := 0; j < n; j++ {
			if m.srcToTgt[src[j]] == y {
				fn(j)
			}
		}
		return
	}
	j0 := y - V
	if j0 >= n {
		return
	}
	s0 := src[j0]
	for j := 0; j < n; j++ {
		if j == j0 || (s0 != models.UnkID && src[j] == s0) {
			fn(j)
		}
	}
}

// extendedLogProbs is the copy model's log P over target ids then source
// positions, [B, V+S], for one decoder step of B rows: logits [B, V],
// gates pgen [B], attention att [B, S] over the sources src [B*S] of
// lengths srcLen [B]. Mass of positions merged into a target id or an
// earlier position leaves their own entry at -1e30, as do positions
// beyond the source.
func (m *Model) extendedLogProbs(logits, pgen, att []float32, src, srcLen []int, S int) []float32 {
	V, B := m.Cfg.TgtVocab, len(srcLen)
	out := make([]float32, B*(V+S))
	for b := 0; b < B; b++ {
		pg := pgen[b]
		pr := out[b*(V+S) : (b+1)*(V+S)]
		copy(pr, logits[b*V:(b+1)*V])
		softmaxInPlace(pr[:V])
		for k := 0; k < V; k++ {
			pr[k] *= pg
		}
		for j := 0; j < srcLen[b]; j++ {
			s := src[b*S+j]
			mass := (1 - pg) * att[b*S+j]
			if t := m.srcToTgt[s]; t >= 0 {
				pr[t] += mass
				continue
			}
			first := j
			if s != models.UnkID {
				for k := 0; k < j; k++ {
					if src[b*S+k] == s {
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

func softmaxInPlace(x []float32) { kernels.SoftmaxRowRef(x) }
