package eval

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestPlotSVGWellFormed(t *testing.T) {
	for _, p := range []Plot{
		{Title: "ROC <AUC 0.5>", XLabel: "FPR", YLabel: "TPR", X: []float64{0, 0.5, 1}, Y: []float64{0, 0.5, 1}, Line: true, Unit: true},
		{Title: "scatter", X: []float64{0.2, 0.4}, Y: []float64{3, 3}, Labels: []string{"a&b", "c"}},
		{Title: "empty"},
		{Title: "one-point line", Line: true, X: []float64{1}, Y: []float64{2}},
	} {
		t.Run(p.Title, func(t *testing.T) {
			var b strings.Builder
			if err := p.WriteSVG(&b); err != nil {
				t.Fatal(err)
			}
			dec := xml.NewDecoder(strings.NewReader(b.String()))
			for {
				_, err := dec.Token()
				if err != nil {
					if err.Error() == "EOF" {
						break
					}
					t.Fatalf("not well-formed XML: %v\n%s", err, b.String())
				}
			}
			if strings.Contains(b.String(), "NaN") {
				t.Fatalf("NaN in SVG")
			}
		})
	}
}
