package kernels

import (
	"math/bits"
	"strconv"
)

// DropChunk is the number of elements that share one random stream in
// ops.Dropout (ops/dropout.go dropChunk).
const DropChunk = 1 << 14

// DropoutParams identifies one dropout mask: ops.Dropout derives it from
// the source's seed, the op's number in build order and the training step.
type DropoutParams struct {
	// P is the drop probability in [0,1).
	P float32
	// Seed is the DropoutSource's seed.
	Seed uint64
	// ID is the op's number in build order.
	ID int
	// Step is the training step set on the source.
	Step uint64
}

// DropoutRef computes ops.Dropout in training mode: mask[i] is 0 or
// 1/(1-P) and y = x * mask, bit for bit the mask ops draws. Chunk c of
// DropChunk elements draws from data.SubRand(seed, "dropout/ID/Step/c"); one
// 64-bit draw decides two elements (low half first), dropping when the
// 32-bit half is below P*2^32. P == 0 copies x and sets mask to 1.
func DropoutRef(n int, p DropoutParams, x, y, mask []float32) {
	if p.P == 0 {
		for i := 0; i < n; i++ {
			mask[i] = 1
			y[i] = x[i]
		}
		return
	}
	DropoutChunksRef(n, p, 0, (n+DropChunk-1)/DropChunk, x, y, mask)
}

// DropoutChunksRef fills chunks [lo,hi) of DropoutRef's mask and output for
// n elements (P > 0): each chunk draws from its own stream, so ops fills
// them in parallel.
func DropoutChunksRef(n int, p DropoutParams, lo, hi int, x, y, mask []float32) {
	th := DropThreshold(p.P)
	keep := 1 / (1 - p.P)
	for c := lo; c < hi; c++ {
		st := NewPCGState(p.Seed, DropStream(p.ID, p.Step, c))
		start, end := c*DropChunk, min((c+1)*DropChunk, n)
		xs, ys, ms := x[start:end], y[start:end], mask[start:end]
		ys, ms = ys[:len(xs)], ms[:len(xs)] // drops bounds checks below
		// Pairs of elements share one draw (low half first); the scale is
		// picked without a branch, which a 10% drop rate would mispredict.
		i := 0
		for ; i+1 < len(xs); i += 2 {
			u := st.Uint64()
			s0, s1 := keep, keep
			if uint32(u) < th {
				s0 = 0
			}
			if uint32(u>>32) < th {
				s1 = 0
			}
			ms[i], ms[i+1] = s0, s1
			ys[i], ys[i+1] = xs[i]*s0, xs[i+1]*s1
		}
		if i < len(xs) {
			s0 := keep
			if uint32(st.Uint64()) < th {
				s0 = 0
			}
			ms[i], ys[i] = s0, xs[i]*s0
		}
	}
}

// DropoutGradRef computes dx = dy * mask (ops' GradDropout).
func DropoutGradRef(n int, dy, mask, dx []float32) {
	dy, mask, dx = dy[:n], mask[:n], dx[:n] // drops bounds checks below
	for i := range dx {
		dx[i] = dy[i] * mask[i]
	}
}

// DropThreshold is the 32-bit threshold below which an element drops.
func DropThreshold(p float32) uint32 { return uint32(float64(p) * (1 << 32)) }

// DropStream returns the FNV-1a hash of the stream name
// "dropout/<id>/<step>/<chunk>" that data.SubRand uses as PCG's second seed.
func DropStream(id int, step uint64, chunk int) uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h ^= uint64(s[i])
			h *= 1099511628211
		}
	}
	add("dropout/")
	add(strconv.Itoa(id))
	add("/")
	add(strconv.FormatUint(step, 10))
	add("/")
	add(strconv.Itoa(chunk))
	return h
}

// PCGState is math/rand/v2's PCG (128-bit LCG with DXSM output), spelled
// out so the GPU kernel can compute the same draws and jump ahead.
type PCGState struct{ Hi, Lo uint64 }

// NewPCGState matches rand.NewPCG(seed1, seed2).
func NewPCGState(seed1, seed2 uint64) PCGState { return PCGState{seed1, seed2} }

const (
	pcgMulHi = 2549297995355413924
	pcgMulLo = 4865540595714422341
	pcgIncHi = 6364136223846793005
	pcgIncLo = 1442695040888963407
)

// Uint64 advances the state and returns the next draw.
func (s *PCGState) Uint64() uint64 {
	hi, lo := bits.Mul64(s.Lo, pcgMulLo)
	hi += s.Hi*pcgMulLo + s.Lo*pcgMulHi
	lo, c := bits.Add64(lo, pcgIncLo, 0)
	hi, _ = bits.Add64(hi, pcgIncHi, c)
	s.Hi, s.Lo = hi, lo
	hi ^= hi >> 32
	hi *= 0xda942042e4dd58b5
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// Advance moves the state k draws ahead in O(log k) (Brown's LCG jump:
// compose the affine map state -> mul*state + inc with itself), which the
// GPU kernel uses to start each thread mid-stream.
func (s *PCGState) Advance(k uint64) {
	mHi, mLo := uint64(pcgMulHi), uint64(pcgMulLo)
	aHi, aLo := uint64(pcgIncHi), uint64(pcgIncLo)
	accMHi, accMLo := uint64(0), uint64(1)
	accAHi, accALo := uint64(0), uint64(0)
	for k > 0 {
		if k&1 == 1 {
			accMHi, accMLo = mul128(accMHi, accMLo, mHi, mLo)
			accAHi, accALo = mul128(accAHi, accALo, mHi, mLo)
			accAHi, accALo = add128(accAHi, accALo, aHi, aLo)
		}
		// a = (m + 1) * a; m = m * m
		t1Hi, t1Lo := add128(mHi, mLo, 0, 1)
		aHi, aLo = mul128(t1Hi, t1Lo, aHi, aLo)
		mHi, mLo = mul128(mHi, mLo, mHi, mLo)
		k >>= 1
	}
	s.Hi, s.Lo = mul128(accMHi, accMLo, s.Hi, s.Lo)
	s.Hi, s.Lo = add128(s.Hi, s.Lo, accAHi, accALo)
}

func mul128(aHi, aLo, bHi, bLo uint64) (uint64, uint64) {
	hi, lo := bits.Mul64(aLo, bLo)
	hi += aHi*bLo + aLo*bHi
	return hi, lo
}

func add128(aHi, aLo, bHi, bLo uint64) (uint64, uint64) {
	lo, c := bits.Add64(aLo, bLo, 0)
	hi, _ := bits.Add64(aHi, bHi, c)
	return hi, lo
}
