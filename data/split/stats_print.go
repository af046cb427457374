package split

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"compbench/data/structure"
)

// Print writes s as indented JSON or as aligned lines.
func (s Stats) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	f := func(p *float64) string {
		if p == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	fmt.Fprintf(w, "sizes              train %d  dev %d  test %d\n", s.TrainSize, s.DevSize, s.TestSize)
	fmt.Fprintf(w, "atom divergence    %s\n", f(s.AtomDivergence))
	over := ""
	if s.WeightsOver != "" {
		over = ", weights over " + s.WeightsOver
	}
	if s.Measure == structure.MeasureNQG {
		fmt.Fprintf(w, "compound div.      %s (NQG's: parent-child pairs, per occurrence, unweighted)\n", f(s.CompoundDivergence))
	} else {
		fmt.Fprintf(w, "compound div.      %s (unweighted %s%s)\n", f(s.CompoundDivergence), f(s.CompoundDivergenceUnweighted), over)
	}
	fmt.Fprintf(w, "pattern coverage   output %.4f  input %.4f\n", s.OutputPatternCoverage, s.InputPatternCoverage)
	fmt.Fprintf(w, "length ratio       output %.4f  input %.4f\n", s.OutputLengthRatio, s.InputLengthRatio)
	_, err := fmt.Fprintf(w, "missing atoms      %d %s\n", len(s.MissingAtoms), strings.Join(s.MissingAtoms, " | "))
	return err
}

// Diff names the first divergence on which s and t differ beyond
// summation order, or "".
func (s Stats) Diff(t Stats) string {
	for _, d := range []struct {
		name string
		x, y *float64
	}{{"atom divergence", s.AtomDivergence, t.AtomDivergence},
		{"compound divergence", s.CompoundDivergence, t.CompoundDivergence},
		{"unweighted compound divergence", s.CompoundDivergenceUnweighted, t.CompoundDivergenceUnweighted}} {
		if (d.x == nil) != (d.y == nil) || d.x != nil && math.Abs(*d.x-*d.y) > 1e-9 {
			return d.name
		}
	}
	return ""
}
