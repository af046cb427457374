package split

import (
	"testing"

	"compgen/data"
	"compgen/data/structure"
)

// BenchmarkMCDSCAN builds an MCD split of all 20,910 SCAN commands with rule
// trees, reporting its divergences (Keysers et al. report D_C 0.734-0.736
// at D_A 0.014-0.020; random splits give D_C ~0.047).
func BenchmarkMCDSCAN(b *testing.B) {
	pool := allSCAN()
	trees, err := Trees(pool, structure.TreeAuto)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ix, err := structure.Build(trees, structure.DefaultCompoundConfig(), nil)
		if err != nil {
			b.Fatal(err)
		}
		a, err := MCD(ix, DefaultMCDConfig(), DefaultMCDSizes(), data.NewRand(1), nil)
		if err != nil {
			b.Fatal(err)
		}
		s := statsOf(pool, ix, a, AnonSCAN)
		b.ReportMetric(*s.CompoundDivergence, "D_C")
		b.ReportMetric(*s.AtomDivergence, "D_A")
		r, _ := Random(len(pool), DefaultMCDSizes(), data.NewRand(1))
		rs := statsOf(pool, ix, r, AnonSCAN)
		b.ReportMetric(*rs.CompoundDivergence, "random_D_C")
	}
}
