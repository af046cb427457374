package models

import (
	"slices"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/robustfill"
)

// ioCases are I/O examples whose characters collide with the structure
// tokens or the tokenizer: pipes, arrows, spaces, empty strings, other
// white space, escapes spelled out, non-ASCII and invalid UTF-8.
var ioCases = []struct {
	name      string
	ins       []string
	outs      []string
	want      string // the flat source tokens, space-separated
	inLen     []int  // characters per input
	outLen    []int  // characters per output
	roundTrip bool   // robustfill.DecodeIO gives ins and outs back
}{
	{"plain", []string{"ab", "c"}, []string{"A", "C"}, "a b -> A | c -> C", []int{2, 1}, []int{1, 1}, true},
	{"pipe", []string{"a|b", "|"}, []string{"|", "x|"}, "a PIPE b -> PIPE | PIPE -> x PIPE", []int{3, 1}, []int{1, 2}, true},
	{"arrow", []string{"a->b", "->"}, []string{"->", ">-"}, "a - > b -> - > | - > -> > -", []int{4, 2}, []int{2, 2}, true},
	{"spaces", []string{" a  b ", " "}, []string{"a b", "  "}, "SPACE a SPACE SPACE b SPACE -> a SPACE b | SPACE -> SPACE SPACE", []int{6, 1}, []int{3, 2}, true},
	{"empty input", []string{"", "x"}, []string{"y", "z"}, "-> y | x -> z", []int{0, 1}, []int{1, 1}, true},
	{"empty output", []string{"x", "y"}, []string{"", ""}, "x -> | y ->", []int{1, 1}, []int{0, 0}, true},
	{"all empty", []string{"", ""}, []string{"", ""}, "-> | ->", []int{0, 0}, []int{0, 0}, true},
	{"missing outputs", []string{"a", "b"}, []string{"A"}, "a -> A | b ->", []int{1, 1}, []int{1, 0}, false},
	{"other white space", []string{"a\tb\n"}, []string{"\u00a0"}, "a U+0009 b U+000A -> U+00A0", []int{4}, []int{1}, true},
	{"escape lookalikes", []string{"SPACE", "PIPE"}, []string{"U+0020", "<sp>"}, "S P A C E -> U + 0 0 2 0 | P I P E -> < s p >", []int{5, 4}, []int{6, 4}, true},
	{"non-ASCII", []string{"é|ü"}, []string{"日本"}, "é PIPE ü -> 日 本", []int{3}, []int{2}, true},
	{"invalid UTF-8", []string{"a\xffb"}, []string{"\x00"}, "a U+FFFD b -> U+0000", []int{3}, []int{1}, false},
}

// TestSourceTokensIO: a record holding only I/O examples gets exactly the
// tokens of the flat source the RobustFill generator writes for them.
func TestSourceTokensIO(t *testing.T) {
	for _, tc := range ioCases {
		t.Run(tc.name, func(t *testing.T) {
			got := SourceTokens(&data.Record{ID: "x", Inputs: tc.ins, Outputs: tc.outs})
			flat := SourceTokens(&data.Record{ID: "x", Input: robustfill.EncodeIO(tc.ins, tc.outs), Inputs: tc.ins, Outputs: tc.outs})
			if !slices.Equal(got, flat) {
				t.Errorf("fallback %q, generator's flat input %q", got, flat)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("tokens %q, want %q", strings.Join(got, " "), tc.want)
			}
			if n := strings.Count(" "+strings.Join(got, " ")+" ", " "+robustfill.IOSep+" "); n != len(tc.ins)-1 {
				t.Errorf("%d %q tokens for %d examples", n, robustfill.IOSep, len(tc.ins))
			}
			if !tc.roundTrip {
				return
			}
			ins, outs, err := robustfill.DecodeIO(strings.Join(got, " "))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ins, tc.ins) || !slices.Equal(outs, tc.outs) {
				t.Errorf("decoded %q -> %q, want %q -> %q", ins, outs, tc.ins, tc.outs)
			}
		})
	}
}
