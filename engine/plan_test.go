package engine

import (
	"testing"

	"compbench/data"
)

// checkPlacement fails when two intervals live at the same step share
// arena memory, or one overruns the arena.
func checkPlacement(t *testing.T, iv []Interval, offs []int, size int) {
	t.Helper()
	for i := range iv {
		if offs[i] < 0 || offs[i]%alignElems != 0 || offs[i]+iv[i].Size > size {
			t.Fatalf("interval %d %+v at offset %d outside arena %d or misaligned", i, iv[i], offs[i], size)
		}
		for j := i + 1; j < len(iv); j++ {
			live := iv[i].Def <= iv[j].LastUse && iv[j].Def <= iv[i].LastUse
			mem := offs[i] < offs[j]+iv[j].Size && offs[j] < offs[i]+iv[i].Size
			if live && mem && iv[i].Size > 0 && iv[j].Size > 0 {
				t.Fatalf("intervals %d %+v @%d and %d %+v @%d are live together and overlap", i, iv[i], offs[i], j, iv[j], offs[j])
			}
		}
	}
}

func TestPlaceInvariant(t *testing.T) {
	for _, tc := range []struct {
		name         string
		steps, sizes int
	}{{"small", 10, 100}, {"medium", 200, 5000}, {"skewed", 500, 70}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := data.SubRand(7, tc.name)
			for trial := 0; trial < 20; trial++ {
				var iv []Interval
				for s := 0; s < tc.steps; s++ {
					// One buffer per step, sometimes two (a dropout mask).
					for k := 0; k < 1+rng.IntN(2)*rng.IntN(2); k++ {
						end := s + rng.IntN(3)*rng.IntN(tc.steps/2+1)
						iv = append(iv, Interval{Def: s, LastUse: min(end, tc.steps-1), Size: 1 + rng.IntN(tc.sizes)})
					}
				}
				offs, size := Place(iv)
				checkPlacement(t, iv, offs, size)
				total := 0
				for _, x := range iv {
					total += align(x.Size)
				}
				if size > total {
					t.Fatalf("arena %d exceeds the sum of sizes %d", size, total)
				}
			}
		})
	}
}

// TestPlaceReuses: a chain of buffers each read only by the next needs two
// slots, not one per buffer.
func TestPlaceReuses(t *testing.T) {
	var iv []Interval
	for s := 0; s < 10; s++ {
		iv = append(iv, Interval{Def: s, LastUse: s + 1, Size: 64})
	}
	offs, size := Place(iv)
	checkPlacement(t, iv, offs, size)
	if size != 128 {
		t.Errorf("arena %d, want 128", size)
	}
}
