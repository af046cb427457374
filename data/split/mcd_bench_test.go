package split

import (
	"context"
	"testing"

	"compbench/data"
	"compbench/data/scan"
	"compbench/data/structure"
)

// scanPool is every SCAN command (20,910) with the rule tree compbench's SCAN
// parser gives it, as `compbench convert` writes the original tasks.txt.
func scanPool(tb testing.TB) []data.Record {
	tb.Helper()
	all := allSCAN()
	for i := range all {
		cmd, err := scan.Parse(all[i].Input)
		if err != nil {
			tb.Fatalf("%q: %v", all[i].Input, err)
		}
		r := cmd.Record()
		r.ID = all[i].ID
		all[i] = r
	}
	return all
}

// BenchmarkMCDSCAN builds the compounds and an MCD split of all 20,910 SCAN
// commands at split mcd's default settings (every compound kept on a pool
// this size, see MCDCompoundKeep), reporting the divergences (Keysers et
// al. Table 3: D_C 0.734-0.736 at D_A 0.014-0.020; random D_C 0.047).
func BenchmarkMCDSCAN(b *testing.B) {
	pool := scanPool(b)
	trees, err := Trees(pool, structure.TreeAuto)
	if err != nil {
		b.Fatal(err)
	}
	comp := structure.DefaultCompoundConfig()
	comp.Keep = MCDCompoundKeep(len(pool))
	for b.Loop() {
		ix, err := structure.Build(trees, comp, nil)
		if err != nil {
			b.Fatal(err)
		}
		a, err := MCD(context.Background(), ix, OutputLengths(pool), DefaultMCDConfig(), DefaultMCDSizes(), data.NewRand(1), nil)
		if err != nil {
			b.Fatal(err)
		}
		s := statsOf(pool, ix, a, AnonSCAN)
		b.ReportMetric(*s.CompoundDivergence, "D_C")
		b.ReportMetric(*s.AtomDivergence, "D_A")
		b.ReportMetric(s.OutputLengthRatio, "out_len_ratio")
		r, _ := Random(len(pool), DefaultMCDSizes(), data.NewRand(1))
		rs := statsOf(pool, ix, r, AnonSCAN)
		b.ReportMetric(*rs.CompoundDivergence, "random_D_C")
		b.ReportMetric(float64(ix.MaxSize), "compound_nodes")
	}
}

// BenchmarkCompoundsSCAN times the compound index alone on all of SCAN.
func BenchmarkCompoundsSCAN(b *testing.B) {
	trees, err := Trees(scanPool(b), structure.TreeAuto)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := structure.Build(trees, structure.DefaultCompoundConfig(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
