package data

import "math/rand/v2"

// NewRand returns compbench's seeded generator. Every random choice in the
// project flows from one of these, so the same --seed gives the same bytes
// on every machine and Go version (PCG is specified exactly).
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x636f6d7067656e)) // "compbench"
}

// SubRand derives an independent generator for a named sub-stream, so adding
// draws in one part of a run does not shift the numbers of another.
func SubRand(seed uint64, stream string) *rand.Rand {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(stream); i++ {
		h ^= uint64(stream[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}
