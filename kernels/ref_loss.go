package kernels

import (
	"fmt"
	"math"
	"sort"

	"compbench/vecmath"
)

// CEParams are the constants of ops.SoftmaxCrossEntropy.
type CEParams struct {
	// Ignore is the target id whose rows add no loss and get zero gradient.
	Ignore int32
	// Smoothing is the label-smoothing weight in [0,1).
	Smoothing float32
}

// CheckIDs reports the first id outside [0,v) other than ignore (pass a
// value outside [0,v), e.g. -1, to ignore nothing). The kernels assume valid
// ids, as the ops check them first; callers check batches on the host.
func CheckIDs(ids []int32, v int, ignore int32) error {
	for i, id := range ids {
		if id != ignore && (id < 0 || int(id) >= v) {
			return fmt.Errorf("id %d at position %d outside [0,%d)", id, i, v)
		}
	}
	return nil
}

// expSum returns a non-empty row's max and Σ exp(z - max), the sum in
// float64 in order: the shared first half of every log-softmax here.
func expSum(row []float32) (mx float32, s float64) {
	mx = row[0]
	for _, z := range row {
		mx = max(mx, z)
	}
	for _, z := range row {
		s += math.Exp(float64(z - mx))
	}
	return mx, s
}

// CECount returns the number of rows whose target is not ignored.
func CECount(t []int32, ignore int32) int {
	c := 0
	for _, v := range t {
		if v != ignore {
			c++
		}
	}
	return c
}

// SoftmaxCERef computes ops.SoftmaxCrossEntropy over logits x [N,V] and
// targets t [N] into loss[0]: the mean over non-ignored rows of
// lse - (1-s) x[t] - s mean(x), each row's loss (SoftmaxCERowRef) and the
// total accumulated in float64 in row order (0 when every row is ignored).
// The GPU kernel sums the rows in a tree, so it agrees within a relative
// 1e-6.
func SoftmaxCERef(n, v int, p CEParams, x []float32, t []int32, loss []float32) {
	count := CECount(t[:n], p.Ignore)
	if count == 0 {
		loss[0] = 0
		return
	}
	var total float64
	for i := 0; i < n; i++ {
		if t[i] == p.Ignore {
			continue
		}
		total += SoftmaxCERowRef(p.Smoothing, x[i*v:(i+1)*v], t[i])
	}
	loss[0] = float32(total / float64(count))
}

// SoftmaxCERowRef returns the loss of one counted row of logits with target
// t and label smoothing s, in float64: lse - (1-s) row[t] - s mean(row).
// The exponentials are vecmath's float32 ones (a few ulp from float64's,
// summed in float64): over a 32,128-piece vocabulary math.Exp made the
// loss and its gradient a quarter of a T5 training step.
func SoftmaxCERowRef(s float32, row []float32, t int32) float64 {
	eps := float64(s)
	lse := vecLogSumExp(row)
	l := float64(lse) - (1-eps)*float64(row[t])
	if eps > 0 {
		var sum float64
		for _, z := range row {
			sum += float64(z)
		}
		l -= eps * sum / float64(len(row))
	}
	return l
}

// SoftmaxCEGradRef computes ops' GradSoftmaxCE: dx [N,V] =
// dl[0]/count * (softmax(x) - s/V - (1-s) onehot(t)), zero on ignored rows.
func SoftmaxCEGradRef(n, v int, p CEParams, x []float32, t []int32, dl, dx []float32) {
	count := CECount(t[:n], p.Ignore)
	for i := 0; i < n; i++ {
		d := dx[i*v : (i+1)*v]
		if t[i] == p.Ignore {
			clear(d)
			continue
		}
		SoftmaxCEGradRowRef(p.Smoothing, dl[0]/float32(count), x[i*v:(i+1)*v], t[i], d)
	}
}

// SoftmaxCEGradRowRef writes one counted row's gradient d = scale *
// (softmax(row) - s/V - (1-s) onehot(t)), scale being dloss/count.
func SoftmaxCEGradRowRef(s, scale float32, row []float32, t int32, d []float32) {
	lse := vecLogSumExp(row)
	u := s / float32(len(row))
	vecmath.ExpShift(row, lse, d)
	for j, p := range d[:len(row)] {
		d[j] = scale * (p - u)
	}
	d[t] -= scale * (1 - s)
}

// vecLogSumExp is a non-empty row's log Σ e^z with vecmath's exponentials.
func vecLogSumExp(row []float32) float32 {
	mx, sum := vecmath.ExpSum(row)
	return mx + float32(math.Log(sum))
}

// LogSoftmaxRef computes the decoder's row log-softmax (train/decode.go):
// y = x - (max + log Σ exp(x-max)), the sum in float64.
func LogSoftmaxRef(n, v int, x, y []float32) {
	for r := 0; r < n; r++ {
		row := x[r*v : (r+1)*v]
		mx, s := expSum(row)
		l := float32(math.Log(s)) + mx
		for j, z := range row {
			y[r*v+j] = z - l
		}
	}
}

// LogProbAtRef computes GPT-2 scoring's log softmax(x_r)[t_r] per row
// (gpt2.Engine) into out [N] in float64. Its exponentials are
// vecmath's float32 ones: a 50,257-id row costs about 17 ns a value with
// math.Exp, about 0.6 ns vectorised.
func LogProbAtRef(n, v int, x []float32, t []int32, out []float64) {
	for r := 0; r < n; r++ {
		row := x[r*v : (r+1)*v]
		mx, sum := vecmath.ExpSum(row)
		out[r] = float64(row[t[r]]-mx) - math.Log(sum)
	}
}

// Skip lists up to two token ids a row search passes over (the decoder
// skips PAD and UNK); -1 marks an unused slot.
type Skip [2]int32

func (s Skip) has(k int) bool { return int32(k) == s[0] || int32(k) == s[1] }

// ArgmaxRef writes out[r] = the greedy decoder's choice for row r of x
// [N,V]: starting from init, the first k (not skipped) whose value is
// strictly greater than the best so far.
func ArgmaxRef(n, v int, x []float32, init int32, skip Skip, out []int32) {
	for r := 0; r < n; r++ {
		row := x[r*v : (r+1)*v]
		best := int(init)
		for k := range row {
			if row[k] > row[best] && !skip.has(k) {
				best = k
			}
		}
		out[r] = int32(best)
	}
}

// TopKRef writes the k largest values of each row of x [N,V] (skipped ids
// excluded) in decreasing order into vals [N,k] and their ids into idx
// [N,k]; equal values keep increasing id order (a stable sort, as the beam
// search's). Rows with fewer than k candidates pad with -Inf and id -1.
func TopKRef(n, v, k int, x []float32, skip Skip, vals []float32, idx []int32) {
	ids := make([]int, 0, v)
	for r := 0; r < n; r++ {
		row := x[r*v : (r+1)*v]
		ids = ids[:0]
		for j := range row {
			if !skip.has(j) {
				ids = append(ids, j)
			}
		}
		sort.SliceStable(ids, func(a, b int) bool { return row[ids[a]] > row[ids[b]] })
		for j := 0; j < k; j++ {
			if j < len(ids) {
				vals[r*k+j], idx[r*k+j] = row[ids[j]], int32(ids[j])
			} else {
				vals[r*k+j], idx[r*k+j] = float32(math.Inf(-1)), -1
			}
		}
	}
}
