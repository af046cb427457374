package robustfill

import (
	"strings"
	"testing"
)

// Programs covering every operation and argument kind, as JSON and tokens.
var encodingCases = []struct{ name, json, tokens string }{
	{"issue-example",
		`[["GetToken","ALPHANUM",3],["GetFrom",":"],["GetFirst","CHAR",4]]`,
		`GetToken ALPHANUM 3 | GetFrom ':' | GetFirst CHAR 4`},
	{"compose-and-const",
		`[["Compose",["Replace"," ",","],["GetSpan","PROP_CASE",1,"START","PROP_CASE",4,"END"]],["ConstStr","."],["GetToken","PROP_CASE",-1]]`,
		`Compose Replace SPACE ',' GetSpan PROP_CASE 1 START PROP_CASE 4 END | ConstStr '.' | GetToken PROP_CASE -1`},
	{"substr-and-cases",
		`[["SubStr",-100,100],["ToCase","ALL_CAPS"],["ToCase","PROPER"],["ToCase","LOWER"],["Trim"]]`,
		`SubStr -100 100 | ToCase ALL_CAPS | ToCase PROPER | ToCase LOWER | Trim`},
	{"quotes-and-digits",
		`[["ConstStr","\""],["ConstStr","'"],["ConstStr","7"],["Substitute","DIGIT",-5,"'"],["SubstituteAll","LOWER","1"]]`,
		`ConstStr '"' | ConstStr ''' | ConstStr '7' | Substitute DIGIT -5 ''' | SubstituteAll LOWER '1'`},
	{"regex-delimiters",
		`[["GetSpan","'",2,"END"," ",-1,"START"],["GetUpto","WORD"],["GetFrom","\""],["Remove","NUMBER",5],["RemoveAll","CHAR"],["GetAll","ALL_CAPS"]]`,
		`GetSpan ''' 2 END SPACE -1 START | GetUpto WORD | GetFrom '"' | Remove NUMBER 5 | RemoveAll CHAR | GetAll ALL_CAPS`},
	{"compose-mod-mod",
		`[["Compose",["Trim"],["Compose",["GetAll","WORD"],["ToCase","LOWER"]]]]`,
		``}, // nested Compose is invalid: checked below
}

func TestEncodingRoundTrip(t *testing.T) {
	for _, c := range encodingCases {
		if c.tokens == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseJSON([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(p.AppendJSON(nil)); got != c.json {
				t.Errorf("JSON:\n got %s\nwant %s", got, c.json)
			}
			if got := p.Tokens(); got != c.tokens {
				t.Errorf("tokens:\n got %s\nwant %s", got, c.tokens)
			}
			q, err := ParseTokens(c.tokens)
			if err != nil {
				t.Fatal(err)
			}
			if !q.Equal(p) {
				t.Errorf("tokens parse to %s, want %s", q.AppendJSON(nil), c.json)
			}
			if got := strings.Join(p.Parts(), " | "); got != c.tokens {
				t.Errorf("parts %q do not join to the tokens", p.Parts())
			}
			// Without separators the program reads the same.
			q, err = ParseTokens(strings.ReplaceAll(c.tokens, " | ", " "))
			if err != nil || !q.Equal(p) {
				t.Errorf("without separators: %v", err)
			}
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty-input", ``, "want a JSON list"},
		{"object", `{}`, "want a JSON list"},
		{"empty-list", `[]`, "empty list"},
		{"empty-expression", `[[]]`, "expression 1: want [\"Op\""},
		{"not-a-list", `["Trim"]`, "expression 1: want [\"Op\""},
		{"op-not-string", `[[1]]`, "operation name"},
		{"unknown-op", `[["Concat"]]`, `unknown operation "Concat"`},
		{"arity", `[["SubStr",1]]`, "SubStr: want 2 arguments, got 1"},
		{"extra-arg", `[["Trim",1]]`, "Trim: want 0 arguments, got 1"},
		{"position-zero", `[["SubStr",0,1]]`, "position 0 out of range"},
		{"position-big", `[["SubStr",1,101]]`, "position 101 out of range"},
		{"float", `[["SubStr",1.5,2]]`, "want an integer"},
		{"float-integral", `[["SubStr",1.0,2]]`, "want an integer"},
		{"string-int", `[["SubStr","1",2]]`, "want an integer"},
		{"index-big", `[["GetToken","WORD",6]]`, "index 6 out of range"},
		{"index-zero", `[["GetFirst","WORD",0]]`, "index 0 out of range"},
		{"token-takes-type-only", `[["GetToken",".",1]]`, `invalid value "." for a type`},
		{"regex-not-delimiter", `[["GetUpto","x"]]`, `invalid value "x" for a regex`},
		{"regex-two-chars", `[["GetFrom",".."]]`, "for a regex"},
		{"const-two-chars", `[["ConstStr","ab"]]`, "one-character string"},
		{"const-not-a-character", `[["ConstStr","|"]]`, "invalid character"},
		{"replace-not-delimiter", `[["Replace","a",","]]`, "invalid delimiter"},
		{"bad-case", `[["ToCase","UPPER"]]`, `invalid value "UPPER" for a case`},
		{"bad-boundary", `[["GetSpan","WORD",1,"MIDDLE","WORD",1,"END"]]`, "for a boundary"},
		{"compose-const", `[["Compose",["ConstStr","a"],["Trim"]]]`, "not a modification"},
		{"compose-inner-const", `[["Compose",["Trim"],["ConstStr","a"]]]`, "not a modification or substring"},
		{"compose-nested", `[["Compose",["Trim"],["Compose",["Trim"],["Trim"]]]]`, "not a modification or substring"},
		{"compose-substring-outer", `[["Compose",["GetUpto","WORD"],["Trim"]]]`, "not a modification"},
		{"compose-arity", `[["Compose",["Trim"]]]`, "Compose: want 2 arguments"},
		{"trailing", `[["Trim"]] x`, "want a JSON list"},
		{"second-expression", `[["Trim"],["Foo"]]`, "expression 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseJSON([]byte(c.in))
			if err == nil {
				t.Fatalf("%s parsed", c.in)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestParseTokensErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "empty program"},
		{"blank", "  ", "empty program"},
		{"only-separator", "|", "want an operation"},
		{"leading-separator", "| Trim", "want an operation"},
		{"trailing-separator", "Trim |", `ends with "|"`},
		{"double-separator", "Trim | | Trim", "want an operation"},
		{"missing-argument", "SubStr 1", "unexpected end"},
		{"leading-zero", "SubStr 01 2", `invalid value "01"`},
		{"plus-sign", "SubStr +1 2", `invalid value "+1"`},
		{"unquoted-char", "ConstStr a", `invalid value "a"`},
		{"long-quote", "ConstStr 'ab'", `invalid value "'ab'"`},
		{"quoted-space", "ConstStr ' '", `invalid value "'"`},
		{"regex-letter", "GetUpto 'x'", `invalid value "'x'"`},
		{"type-for-char", "Substitute WORD 1 WORD", `invalid value "WORD"`},
		{"unknown-op", "Foo", `want an operation, got "Foo"`},
		{"compose-const", "Compose ConstStr 'a' Trim", "not a modification"},
		{"position-range", "SubStr 1 200", "position 200 out of range"},
		{"json-style", `["Trim"]`, "want an operation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTokens(c.in)
			if err == nil {
				t.Fatalf("%q parsed", c.in)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

func TestNestedComposeRejected(t *testing.T) {
	for _, c := range encodingCases {
		if c.tokens != "" {
			continue
		}
		if _, err := ParseJSON([]byte(c.json)); err == nil {
			t.Errorf("%s: nested Compose parsed", c.name)
		}
	}
}

func TestMarshalJSONInvalid(t *testing.T) {
	if _, err := (Program{{Op: GetToken, T: Word}}).MarshalJSON(); err == nil {
		t.Error("index 0 marshalled")
	}
	var p Program
	if err := p.UnmarshalJSON([]byte(`[["Trim"]]`)); err != nil || len(p) != 1 || p[0].Op != Trim {
		t.Errorf("UnmarshalJSON: %v %v", p, err)
	}
}

func TestIOEncoding(t *testing.T) {
	for _, c := range []struct {
		name    string
		in, out []string
		want    string
	}{
		{"plain", []string{"a b", "c|"}, []string{"A", ""}, "a SPACE b -> A | c PIPE ->"},
		{"one", []string{"x.y"}, []string{"y"}, "x . y -> y"},
		{"empty-input", []string{"", "a"}, []string{"b", "c"}, "-> b | a -> c"},
		{"escapes", []string{"a\tb", "é"}, []string{"\n", "->"}, "a U+0009 b -> U+000A | é -> - >"},
		{"arrow-char-tokens", []string{"U+0041"}, []string{"-"}, "U + 0 0 4 1 -> -"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := EncodeIO(c.in, c.out)
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			in, out, err := DecodeIO(got)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(in, "\x00") != strings.Join(c.in, "\x00") || strings.Join(out, "\x00") != strings.Join(c.out, "\x00") {
				t.Errorf("decoded %q %q", in, out)
			}
		})
	}
	for _, bad := range []string{"", "a b", "a -> b -> c", "ab -> c", "a -> | -> b |"} {
		if _, _, err := DecodeIO(bad); err == nil {
			t.Errorf("DecodeIO(%q) succeeded", bad)
		}
	}
}
