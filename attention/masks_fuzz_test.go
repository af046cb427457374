package attention

import "testing"

// FuzzAllowed checks the masks' invariants on arbitrary separator/padding
// patterns: each decompositional mask lies between sep-to-last and sep-full
// and within causal; every real token sees itself; padding neither attends
// nor is attended to; non-separator rows agree across the three masks.
func FuzzAllowed(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 0, 1})
	f.Add([]byte{0, 0, 2, 2})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || len(b) > 64 {
			return
		}
		sep, pad := make([]bool, len(b)), make([]bool, len(b))
		for i, v := range b {
			sep[i] = v%3 == 1
			pad[i] = v%3 == 2
		}
		get := func(m Mask) [][]bool {
			a, err := Allowed(m, sep, pad)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		c, f, ssl, sl := get(Causal), get(SepFull), get(SepToSepAndLast), get(SepToLast)
		for i := range c {
			isSep := i == 0 || sep[i]
			for j := range c[i] {
				if sl[i][j] && !ssl[i][j] || ssl[i][j] && !f[i][j] || f[i][j] && !c[i][j] {
					t.Fatalf("ordering broken at (%d,%d)", i, j)
				}
				if c[i][j] != (j <= i && !pad[i] && !pad[j]) {
					t.Fatalf("causal wrong at (%d,%d)", i, j)
				}
				if !isSep && (sl[i][j] != f[i][j]) {
					t.Fatalf("non-separator row %d differs between masks", i)
				}
			}
			if !pad[i] && !sl[i][i] {
				t.Fatalf("token %d does not see itself", i)
			}
		}
	})
}
