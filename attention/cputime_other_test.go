//go:build !unix

package attention

// cpuTime is not measured off Unix.
func cpuTime() int64 { return 0 }
