package attention

import (
	"math"
	"strings"
	"testing"
)

// parse reads a matrix written as rows of 0/1 separated by spaces.
func parse(rows ...string) [][]bool {
	m := make([][]bool, len(rows))
	for i, r := range rows {
		for _, f := range strings.Fields(r) {
			m[i] = append(m[i], f == "1")
		}
	}
	return m
}

func same(a, b [][]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func show(m [][]bool) string {
	var sb strings.Builder
	for _, r := range m {
		sb.WriteString("\n")
		for _, v := range r {
			if v {
				sb.WriteString("1 ")
			} else {
				sb.WriteString("0 ")
			}
		}
	}
	return sb.String()
}

func TestAllowed(t *testing.T) {
	// Decoder input <start> WALK SEP JUMP JUMP SEP: separators at 0, 2, 5;
	// parts opened by them: {0,1}, {2,3,4}, {5}.
	sep := []bool{true, false, true, false, false, true}
	pad := make([]bool, 6)
	// Same input with two padding positions at the end.
	sepP := append(append([]bool(nil), sep...), false, false)
	padP := []bool{false, false, false, false, false, false, true, true}
	cases := []struct {
		name     string
		mask     Mask
		sep, pad []bool
		want     [][]bool
	}{
		{"causal", Causal, sep, pad, parse(
			"1 0 0 0 0 0",
			"1 1 0 0 0 0",
			"1 1 1 0 0 0",
			"1 1 1 1 0 0",
			"1 1 1 1 1 0",
			"1 1 1 1 1 1")},
		{"sep-full", SepFull, sep, pad, parse(
			"1 0 0 0 0 0",
			"1 1 0 0 0 0",
			"1 1 1 0 0 0",
			"0 0 1 1 0 0",
			"0 0 1 1 1 0",
			"1 1 1 1 1 1")},
		{"sep-to-sep-and-last", SepToSepAndLast, sep, pad, parse(
			"1 0 0 0 0 0",
			"1 1 0 0 0 0",
			"1 1 1 0 0 0",
			"0 0 1 1 0 0",
			"0 0 1 1 1 0",
			"1 1 1 0 1 1")},
		{"sep-to-last", SepToLast, sep, pad, parse(
			"1 0 0 0 0 0",
			"1 1 0 0 0 0",
			"0 1 1 0 0 0",
			"0 0 1 1 0 0",
			"0 0 1 1 1 0",
			"0 1 0 0 1 1")},
		{"sep-to-last padded", SepToLast, sepP, padP, parse(
			"1 0 0 0 0 0 0 0",
			"1 1 0 0 0 0 0 0",
			"0 1 1 0 0 0 0 0",
			"0 0 1 1 0 0 0 0",
			"0 0 1 1 1 0 0 0",
			"0 1 0 0 1 1 0 0",
			"0 0 0 0 0 0 0 0",
			"0 0 0 0 0 0 0 0")},
		{"causal padded", Causal, sepP, padP, parse(
			"1 0 0 0 0 0 0 0",
			"1 1 0 0 0 0 0 0",
			"1 1 1 0 0 0 0 0",
			"1 1 1 1 0 0 0 0",
			"1 1 1 1 1 0 0 0",
			"1 1 1 1 1 1 0 0",
			"0 0 0 0 0 0 0 0",
			"0 0 0 0 0 0 0 0")},
		// The start token is a separator even when not flagged.
		{"start counts as separator", SepToLast, []bool{false, false, true}, make([]bool, 3), parse(
			"1 0 0",
			"1 1 0",
			"0 1 1")},
		{"length one", SepFull, []bool{true}, []bool{false}, parse("1")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Allowed(c.mask, c.sep, c.pad)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, c.want) {
				t.Errorf("got%s\nwant%s", show(got), show(c.want))
			}
		})
	}
}

func TestAllowedErrors(t *testing.T) {
	if _, err := Allowed("sep-sideways", []bool{true}, []bool{false}); err == nil {
		t.Error("unknown mask accepted")
	}
	if _, err := Allowed(Causal, []bool{true, false}, []bool{false}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := ParseMask("nope"); err == nil || !strings.Contains(err.Error(), "sep-to-last") {
		t.Errorf("ParseMask error should list the masks, got %v", err)
	}
}

// Every decompositional mask lies between sep-to-last and sep-full, and
// within the causal mask.
func TestMaskOrdering(t *testing.T) {
	sep := []bool{true, false, false, true, false, true, true, false, false, false, true}
	pad := make([]bool, len(sep))
	get := func(m Mask) [][]bool {
		a, err := Allowed(m, sep, pad)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	c, f, ssl, sl := get(Causal), get(SepFull), get(SepToSepAndLast), get(SepToLast)
	for i := range c {
		for j := range c[i] {
			if sl[i][j] && !ssl[i][j] || ssl[i][j] && !f[i][j] || f[i][j] && !c[i][j] {
				t.Fatalf("ordering broken at (%d,%d)", i, j)
			}
		}
	}
}

func TestPaddingAndAdditive(t *testing.T) {
	got := Padding([]bool{false, true}, []bool{false, false, true})
	if want := parse("1 1 0", "0 0 0"); !same(got, want) {
		t.Errorf("padding: got%s", show(got))
	}
	sep, pad := Flags([]int{1, 5, 2, 0}, 1, 2, 0)
	if want := []bool{true, false, true, false}; !same([][]bool{sep}, [][]bool{want}) {
		t.Errorf("flags sep %v", sep)
	}
	if want := []bool{false, false, false, true}; !same([][]bool{pad}, [][]bool{want}) {
		t.Errorf("flags pad %v", pad)
	}
	a, err := Additive([][][]bool{got})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Shape(); s[0] != 1 || s[1] != 1 || s[2] != 2 || s[3] != 3 {
		t.Fatalf("shape %v", s)
	}
	v := a.Float32s()
	if v[0] != 0 || v[1] != 0 || !math.IsInf(float64(v[2]), -1) || !math.IsInf(float64(v[3]), -1) {
		t.Errorf("values %v", v)
	}
	if _, err := Additive(nil); err == nil {
		t.Error("empty batch accepted")
	}
	if _, err := Additive([][][]bool{parse("1 1"), parse("1")}); err == nil {
		t.Error("ragged batch accepted")
	}
}
