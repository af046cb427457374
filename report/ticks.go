package report

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// Unit says how an axis labels its values.
type Unit int

const (
	// Plain labels numbers as decimals, integers without a point and
	// with thousands separators from 10,000 on ("12,000", "0.25").
	Plain Unit = iota
	// Percent labels fractions as percentages ("20%" for 0.2), as the
	// table shows exact match.
	Percent
)

// Ticks marks an axis at round steps, 1, 2 or 5 × 10^k. Its first and last
// ticks enclose the data range, so an axis with AutoRescale ends on a
// labelled tick instead of cutting the last one off.
type Ticks struct {
	// Intervals is the most steps between the first and last tick
	// (0: 5).
	Intervals int
	Unit      Unit
}

var _ plot.Ticker = Ticks{}

// Ticks implements plot.Ticker.
func (t Ticks) Ticks(lo, hi float64) []plot.Tick {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	n := t.Intervals
	if n <= 0 {
		n = 5
	}
	m, k, first, last := roundStep(lo, hi, n)
	ticks := make([]plot.Tick, 0, last-first+1)
	for i := first; i <= last; i++ {
		ticks = append(ticks, plot.Tick{Value: scaled(i*m, k)})
	}
	// Labels show as many decimals as the step needs, so that 0.1 + 0.2
	// reads "0.3" and every label of an axis has the same precision.
	dec := max(0, -k)
	if t.Unit == Percent {
		dec = max(0, -(k + 2))
	}
	sep := false
	for _, tk := range ticks {
		sep = sep || math.Abs(tk.Value) >= 1e4
	}
	for i := range ticks {
		ticks[i].Label = t.format(ticks[i].Value, dec, sep)
	}
	return ticks
}

// roundStep picks the step m × 10^k (m 1, 2 or 5) giving at most n
// intervals, and the first and last tick as multiples of m × 10^k.
func roundStep(lo, hi float64, n int) (m, k, first, last int) {
	span := hi - lo
	if span == 0 {
		span = math.Max(math.Abs(hi), 1)
	}
	k = int(math.Floor(math.Log10(span / float64(n))))
	for ; ; k++ {
		for _, m = range []int{1, 2, 5} {
			step := scaled(m, k)
			// The tolerance keeps 1.0000000002 from opening a new
			// interval after 1 (sums of floats).
			first = int(math.Floor(lo/step + 1e-9))
			last = int(math.Ceil(hi/step - 1e-9))
			if last == first {
				last++
			}
			if last-first <= n {
				return m, k, first, last
			}
		}
	}
}

// scaled is i × 10^k, dividing for negative k so that 3 × 10^-1 is 0.3
// and not 0.30000000000000004.
func scaled(i, k int) float64 {
	if k < 0 {
		return float64(i) / math.Pow10(-k)
	}
	return float64(i) * math.Pow10(k)
}

func (t Ticks) format(v float64, dec int, sep bool) string {
	suffix := ""
	if t.Unit == Percent {
		v, suffix = 100*v, "%"
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if s == "-0" || strings.Trim(s, "-0.") == "" {
		s = strconv.FormatFloat(0, 'f', dec, 64)
	}
	if sep {
		s = thousands(s)
	}
	return s + suffix
}

// thousands puts commas between groups of three digits of the integer
// part of a formatted number.
func thousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}
