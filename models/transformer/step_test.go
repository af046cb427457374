package transformer

import "testing"

// TestCacheLen: a step graph's cache covers its position and stays within
// the maximum length; a decoding of 48 positions compiles 10 step graphs,
// and past 32 positions attends over at most a quarter more keys than it
// has.
func TestCacheLen(t *testing.T) {
	for _, maxLen := range []int{1, 5, 20, 48, 200} {
		seen := map[int]bool{}
		for pos := 0; pos < maxLen; pos++ {
			L := cacheLen(pos, maxLen)
			if L < pos+1 || L > maxLen || (pos >= 32 && 4*L > 5*(pos+1)) {
				t.Fatalf("max %d, position %d: cache length %d", maxLen, pos, L)
			}
			seen[L] = true
		}
		if maxLen == 48 && len(seen) != 10 {
			t.Fatalf("%d step graphs for 48 positions, want 10", len(seen))
		}
	}
}
