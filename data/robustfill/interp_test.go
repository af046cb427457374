package robustfill

import "testing"

func runJSON(t *testing.T, prog, input string) string {
	t.Helper()
	p, err := ParseJSON([]byte(prog))
	if err != nil {
		t.Fatalf("parse %s: %v", prog, err)
	}
	out, err := p.Run(input)
	if err != nil {
		t.Fatalf("run %s: %v", prog, err)
	}
	return out
}

// The two check programs of the authors' DSL tests.
func TestCheckPrograms(t *testing.T) {
	for _, c := range []struct{ name, prog, in, want string }{
		{"token-from-first",
			`[["GetToken","ALPHANUM",3],["GetFrom",":"],["GetFirst","CHAR",4]]`,
			"Ud 9:25,JV3 Obb", "2525,JV3 ObbUd 9"},
		{"compose-span-const",
			`[["Compose",["Replace"," ",","],["GetSpan","PROP_CASE",1,"START","PROP_CASE",4,"END"]],["ConstStr","."],["GetToken","PROP_CASE",-1]]`,
			"Jacob Ethan James Alexander Michael", "Jacob,Ethan,James,Alexander.Michael"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runJSON(t, c.prog, c.in); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestReferenceDeviations lists edge cases next to what the authors' DSL
// (latent_programmer, robust_fill/dsl.py) returns, worked by hand from its
// semantics: compbench agrees except in the documented deviations
// (docs/robustfill.md), marked here.
func TestReferenceDeviations(t *testing.T) {
	for _, c := range []struct {
		name, prog, in string
		want           string // compbench
		ref            string // the reference DSL
		deviation      bool
	}{
		// p1 = -13 and p2 = -17: reversed before any clamping, so "".
		{"substr-reversed-before-start", `[["SubStr",-16,-20]]`, "abc", "", "", false},
		{"substr-reversed-past-end", `[["SubStr",9,7]]`, "abc", "", "", false},
		// p1 = -1 < p2 = 2; the slice start -1 counts from the end: "c".
		{"substr-start-wraps-once", `[["SubStr",-4,3]]`, "abc", "c", "c", false},
		// p1 = -7, p2 = -2: slice [-7:-1] of "abc" is [0:2].
		{"substr-end-wraps-once", `[["SubStr",-10,-5]]`, "abc", "ab", "ab", false},
		{"substr-end-past-end", `[["SubStr",2,100]]`, "abc", "bc", "bc", false},
		// p1 = p2: compbench's p2 is inclusive; the reference returns "".
		{"substr-one-position", `[["SubStr",2,2]]`, "abcd", "b", "", true},
		// An index past the last match: compbench takes the last match's
		// end; the reference uses the match number 1 as an offset.
		{"span-index-past-last", `[["GetSpan","NUMBER",1,"START","NUMBER",5,"END"]]`, "a12b345c", "12b345", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runJSON(t, c.prog, c.in)
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			if !c.deviation && c.want != c.ref {
				t.Errorf("table: %q differs from the reference's %q but is not marked a deviation", c.want, c.ref)
			}
		})
	}
}

func TestOperations(t *testing.T) {
	for _, c := range []struct{ name, expr, in, want string }{
		// SubStr: 1-based, negative from the end, p2 inclusive, order
		// checked before the positions are cut to the value.
		{"substr-one-char", `["SubStr",2,2]`, "abcd", "b"},
		{"substr-all", `["SubStr",1,-1]`, "abcd", "abcd"},
		{"substr-negative", `["SubStr",-2,-1]`, "abcd", "cd"},
		{"substr-reversed", `["SubStr",3,2]`, "abcd", ""},
		{"substr-clamp-end", `["SubStr",2,100]`, "abcd", "bcd"},
		{"substr-clamp-start", `["SubStr",-100,2]`, "abcd", "ab"},
		{"substr-both-past-end", `["SubStr",5,100]`, "abcd", ""},
		{"substr-both-before-start", `["SubStr",-100,-100]`, "abcd", ""},
		{"substr-empty", `["SubStr",1,1]`, "", ""},
		{"substr-code-points", `["SubStr",2,3]`, "äbcd", "bc"},
		// GetSpan: clamped indices, START/END offsets.
		{"span-numbers", `["GetSpan","NUMBER",1,"START","NUMBER",2,"END"]`, "a12b345c", "12b345"},
		{"span-index-past-last", `["GetSpan","NUMBER",1,"START","NUMBER",5,"END"]`, "a12b345c", "12b345"},
		{"span-index-before-first", `["GetSpan","NUMBER",-5,"START","NUMBER",-1,"END"]`, "a12b345c", "12b345"},
		{"span-end-to-start", `["GetSpan","NUMBER",1,"END","NUMBER",2,"START"]`, "a12b345c", "b"},
		{"span-no-match", `["GetSpan","NUMBER",1,"START","WORD",1,"END"]`, "123", ""},
		{"span-second-before-first", `["GetSpan","NUMBER",2,"START","NUMBER",1,"END"]`, "a12b345c", ""},
		{"span-equal-offsets", `["GetSpan","NUMBER",1,"START","NUMBER",1,"START"]`, "a12", ""},
		{"span-delimiter", `["GetSpan"," ",1,"END"," ",2,"START"]`, "a b c", "b"},
		{"span-dot-is-literal", `["GetSpan",".",1,"START",".",-1,"END"]`, "x.y.z", ".y."},
		{"span-empty", `["GetSpan","CHAR",1,"START","CHAR",1,"END"]`, "", ""},
		// GetToken.
		{"token-second", `["GetToken","WORD",2]`, "ab 12 cd", "cd"},
		{"token-last", `["GetToken","WORD",-1]`, "ab 12 cd", "cd"},
		{"token-past-last", `["GetToken","WORD",3]`, "ab 12 cd", ""},
		{"token-before-first", `["GetToken","WORD",-3]`, "ab 12 cd", ""},
		{"token-no-match", `["GetToken","LOWER",1]`, "AB", ""},
		{"token-empty", `["GetToken","LOWER",1]`, "", ""},
		{"token-propcase", `["GetToken","PROP_CASE",1]`, "ABc Dd", "Bc"},
		{"token-propcase-needs-lower", `["GetToken","PROP_CASE",1]`, "A B Cd", "Cd"},
		{"token-allcaps-greedy", `["GetToken","ALL_CAPS",1]`, "ABc", "AB"},
		{"token-digit", `["GetToken","DIGIT",2]`, "a123", "2"},
		{"token-number", `["GetToken","NUMBER",-1]`, "a1 22b333", "333"},
		{"token-alphanum", `["GetToken","ALPHANUM",2]`, "ab12,c3", "c3"},
		{"token-char-space", `["GetToken","CHAR",2]`, "a b", " "},
		{"token-char-skips-non-delimiters", `["GetToken","CHAR",1]`, "-x", "x"},
		{"token-non-ascii-never-matches", `["GetToken","WORD",1]`, "éa", "a"},
		// GetUpto, GetFrom.
		{"upto-type", `["GetUpto","NUMBER"]`, "ab12cd34", "ab12"},
		{"from-type", `["GetFrom","NUMBER"]`, "ab12cd34", "cd34"},
		{"upto-delim", `["GetUpto","."]`, "a.b.c", "a."},
		{"from-delim", `["GetFrom","."]`, "a.b.c", "b.c"},
		{"upto-no-match", `["GetUpto","NUMBER"]`, "abc", ""},
		{"from-no-match", `["GetFrom","("]`, "abc", ""},
		{"from-match-at-end", `["GetFrom","NUMBER"]`, "ab12", ""},
		// ToCase.
		{"proper", `["ToCase","PROPER"]`, "hELLO wORLD", "Hello world"},
		{"proper-leading-delim", `["ToCase","PROPER"]`, "(aB", "(ab"},
		{"all-caps", `["ToCase","ALL_CAPS"]`, "ab1c", "AB1C"},
		{"lower", `["ToCase","LOWER"]`, "AbC", "abc"},
		{"case-empty", `["ToCase","PROPER"]`, "", ""},
		{"proper-non-ascii", `["ToCase","PROPER"]`, "éCOLE", "École"},
		// Replace, Trim.
		{"replace", `["Replace"," ",","]`, "a b  c", "a,b,,c"},
		{"replace-absent", `["Replace","$","#"]`, "abc", "abc"},
		{"trim", `["Trim"]`, " \t a b \n", "a b"},
		{"trim-all-space", `["Trim"]`, "   ", ""},
		{"trim-nothing", `["Trim"]`, "a", "a"},
		// GetFirst, GetAll.
		{"first-two", `["GetFirst","NUMBER",2]`, "1a22b333", "122"},
		{"first-more-than-there-are", `["GetFirst","NUMBER",5]`, "1a22b333", "122333"},
		{"first-negative", `["GetFirst","NUMBER",-1]`, "1a22b333", "122"},
		{"first-negative-all", `["GetFirst","NUMBER",-3]`, "1a22b333", ""},
		{"first-negative-beyond", `["GetFirst","NUMBER",-5]`, "1a22b333", ""},
		{"first-no-match", `["GetFirst","NUMBER",1]`, "abc", ""},
		{"all", `["GetAll","ALL_CAPS"]`, "AbCD e F", "ACDF"},
		{"all-no-match", `["GetAll","DIGIT"]`, "abc", ""},
		// Substitute, SubstituteAll: the first occurrence of the match's text.
		{"substitute", `["Substitute","NUMBER",2,"#"]`, "12a3b12", "12a#b12"},
		{"substitute-first-occurrence", `["Substitute","NUMBER",3,"#"]`, "12a3b12", "#a3b12"},
		{"substitute-negative", `["Substitute","NUMBER",-1,"#"]`, "12a3b12", "#a3b12"},
		{"substitute-out-of-range", `["Substitute","NUMBER",4,"#"]`, "12a3b12", "12a3b12"},
		{"substitute-before-first", `["Substitute","NUMBER",-4,"#"]`, "12a3b12", "12a3b12"},
		{"substitute-no-match", `["Substitute","NUMBER",1,"#"]`, "abc", "abc"},
		{"substitute-digit-earlier-text", `["Substitute","DIGIT",2,"x"]`, "1a1", "xa1"},
		{"substitute-all", `["SubstituteAll","NUMBER","#"]`, "12a3b12", "#a#b#"},
		{"substitute-all-in-order", `["SubstituteAll","DIGIT","1"]`, "12", "11"},
		{"substitute-all-current-value", `["SubstituteAll","WORD","a"]`, "b a", "a a"},
		{"substitute-all-no-match", `["SubstituteAll","DIGIT","1"]`, "ab", "ab"},
		// Remove, RemoveAll.
		{"remove", `["Remove","WORD",2]`, "ab cd ab", "ab  ab"},
		{"remove-first-occurrence", `["Remove","WORD",3]`, "ab cd ab", " cd ab"},
		{"remove-out-of-range", `["Remove","WORD",4]`, "ab cd ab", "ab cd ab"},
		{"remove-negative-out-of-range", `["Remove","WORD",-4]`, "ab cd ab", "ab cd ab"},
		{"remove-no-match", `["Remove","NUMBER",1]`, "ab", "ab"},
		{"remove-all", `["RemoveAll","NUMBER"]`, "a1b22", "ab"},
		{"remove-all-repeated", `["RemoveAll","LOWER"]`, "ab Cab", " C"},
		{"remove-all-everything", `["RemoveAll","ALL_CAPS"]`, "AB", ""},
		{"remove-all-empty", `["RemoveAll","CHAR"]`, "", ""},
		// ConstStr, Compose.
		{"const", `["ConstStr","x"]`, "abc", "x"},
		{"const-empty-input", `["ConstStr"," "]`, "", " "},
		{"compose-mod-sub", `["Compose",["ToCase","ALL_CAPS"],["GetToken","WORD",1]]`, "ab cd", "AB"},
		{"compose-mod-mod", `["Compose",["GetAll","NUMBER"],["Remove","DIGIT",1]]`, "1a23", "23"},
		{"compose-empty-inner", `["Compose",["ToCase","LOWER"],["GetUpto","NUMBER"]]`, "ab", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runJSON(t, "["+c.expr+"]", c.in); got != c.want {
				t.Errorf("%s on %q: got %q, want %q", c.expr, c.in, got, c.want)
			}
		})
	}
}

func TestRunRejectsInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Program
	}{
		{"empty", Program{}},
		{"zero-expression", Program{{}}},
		{"position-zero", Program{{Op: SubStr, K1: 0, K2: 1}}},
		{"compose-nil", Program{{Op: Compose}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.p.Run("abc"); err == nil {
				t.Error("no error")
			}
		})
	}
}

// findAll must agree with a direct reading of the regex definitions.
func TestFindAllMatchesDefinitions(t *testing.T) {
	in := "Ab12 CDe,fGh.ij7 KLm"
	for _, c := range []struct {
		r    Regex
		want []string
	}{
		{TypeRegex(Number), []string{"12", "7"}},
		{TypeRegex(Word), []string{"Ab", "CDe", "fGh", "ij", "KLm"}},
		{TypeRegex(Alphanum), []string{"Ab12", "CDe", "fGh", "ij7", "KLm"}},
		{TypeRegex(AllCaps), []string{"A", "CD", "G", "KL"}},
		{TypeRegex(PropCase), []string{"Ab", "De", "Gh", "Lm"}},
		{TypeRegex(Lower), []string{"b", "e", "f", "h", "ij", "m"}},
		{TypeRegex(Digit), []string{"1", "2", "7"}},
		{DelimRegex(' '), []string{" ", " "}},
		{DelimRegex('.'), []string{"."}},
	} {
		t.Run(c.r.String(), func(t *testing.T) {
			var got []string
			for _, m := range findAll(c.r, in, nil) {
				got = append(got, in[m.s:m.e])
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
}

func TestSolves(t *testing.T) {
	p, err := ParseTokens("GetToken WORD 1 | ConstStr '!'")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		in, out []string
		want    bool
		wantErr bool
	}{
		{"all", []string{"ab cd", "x"}, []string{"ab!", "x!"}, true, false},
		{"one-wrong", []string{"ab cd", "x"}, []string{"ab!", "x"}, false, false},
		{"none", nil, nil, true, false},
		{"length-mismatch", []string{"a"}, nil, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := p.Solves(c.in, c.out)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("got %v, %v", got, err)
			}
		})
	}
}
