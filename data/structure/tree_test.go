package structure

import (
	"encoding/json"
	"strings"
	"testing"

	"compbench/data"
)

func TestParseBracketed(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"leaf", "x", "x"},
		{"compact", "f(a,b)", "f(a, b)"},
		{"spaced", "f ( a , b )", "f(a, b)"},
		{"nested", "answer(population_1(cityid('new york', _)))", "answer(population_1(cityid('new york', _)))"},
		{"empty args", "f()", "f"},
		{"covr attr spaced", "query_attr [ color ] ( filter ( dog , scene ) )", "query_attr[color](filter(dog, scene))"},
		{"covr attr compact", "query_attr[color](filter(dog,scene))", "query_attr[color](filter(dog, scene))"},
		{"covr choose", "choose ( count ( find ( dog ) ) , 2 , 3 )", "choose(count(find(dog)), 2, 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseBracketed(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatBracketed(tr); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseBracketedErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, msg string }{
		{"empty", "  ", "empty program"},
		{"unclosed", "f(a, b", "expected , or )"},
		{"trailing", "f(a) g", "after the program"},
		{"missing comma", "f(a b)", "expected , or )"},
		{"leading comma", "f(,a)", "expected a symbol"},
		{"quote", "f('a)", "unterminated quote"},
		{"empty brackets", "q[]", "empty [ ]"},
		{"paren first", "(f a)", "expected a symbol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBracketed(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.msg)
			}
		})
	}
}

func TestParseSExpr(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"leaf", "x", "x"},
		{"flat", "( f a b )", "f(a, b)"},
		{"nested", "(call SW.listValue (call SW.getProperty en.block (string shape)))",
			"call(SW.listValue, call(SW.getProperty, en.block, string(shape)))"},
		{"no args", "( f )", "f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseSExpr(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := FormatBracketed(tr); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "( f a", "()", "( f a ) b", "((f) a)", "(f , a)"} {
		if _, err := ParseSExpr(bad); err == nil {
			t.Errorf("ParseSExpr(%q) succeeded, want an error", bad)
		}
	}
}

func TestRecordTree(t *testing.T) {
	scanTree := &data.Tree{Label: "S", Children: []*data.Tree{{Label: "V"}}}
	for _, tc := range []struct {
		name string
		rec  data.Record
		kind TreeKind
		want string
	}{
		{"scan auto", data.Record{ID: "a", Tree: scanTree, Output: "x(y"}, TreeAuto, "S(V)"},
		{"robustfill list", data.Record{ID: "b", Program: json.RawMessage(
			`[["GetToken","ALPHANUM",3],["Compose",["Replace"," ",","],["GetSpan","PROP_CASE",1,"START"]],["ConstStr","."]]`)},
			TreeAuto, "Concat(GetToken(ALPHANUM, 3), Compose(Replace( , ,), GetSpan(PROP_CASE, 1, START)), ConstStr(.))"},
		{"robustfill single", data.Record{ID: "c", Program: json.RawMessage(`["ToCase","PROPER",true]`)}, TreeRobustFill, "ToCase(PROPER, true)"},
		{"bracketed auto", data.Record{ID: "d", Output: "f ( a , g ( b ) )"}, TreeAuto, "f(a, g(b))"},
		{"sexpr auto", data.Record{ID: "e", Output: "( f a ( g b ) )"}, TreeAuto, "f(a, g(b))"},
		{"cfq", data.Record{ID: "f", Extra: map[string]json.RawMessage{"ruleTree": json.RawMessage(
			`{"ruleId":{"type":"GRAMMAR_RULE","stringValue":"ROOT"},"subTree":[{"ruleId":"Q"},{"ruleId":{"type":"X"}}]}`)}},
			TreeAuto, `GRAMMAR_RULE:ROOT(Q, {"type":"X"})`},
		{"forced bracketed", data.Record{ID: "g", Tree: scanTree, Output: "h(i)"}, TreeBracketed, "h(i)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := RecordTree(&tc.rec, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRecordTreeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  data.Record
		kind TreeKind
		msg  string
	}{
		{"no tree", data.Record{ID: "a"}, TreeSCAN, "no \"tree\""},
		{"no program", data.Record{ID: "a"}, TreeRobustFill, "no \"program\""},
		{"empty expr", data.Record{ID: "a", Program: json.RawMessage(`[["Concat"],[]]`)}, TreeRobustFill, "empty expression"},
		{"null", data.Record{ID: "a", Program: json.RawMessage(`["f",null]`)}, TreeRobustFill, "null"},
		{"object", data.Record{ID: "a", Program: json.RawMessage(`{"op":1}`)}, TreeRobustFill, "unsupported"},
		{"no ruleTree", data.Record{ID: "a"}, TreeCFQ, "no \"ruleTree\""},
		{"bad ruleTree", data.Record{ID: "a", Extra: map[string]json.RawMessage{"ruleTree": json.RawMessage(`{"subTree":[]}`)}}, TreeCFQ, "no ruleId"},
		{"bad output", data.Record{ID: "a", Output: "f(a"}, TreeAuto, "output:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RecordTree(&tc.rec, tc.kind)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.msg)
			}
		})
	}
	if _, err := ParseTreeKind("xml"); err == nil {
		t.Error("ParseTreeKind accepted xml")
	}
}

// FuzzParseBracketed checks the parser never panics and that whatever it
// accepts formats to text that parses back to the same tree.
func FuzzParseBracketed(f *testing.F) {
	for _, s := range []string{"f(a, b)", "query_attr [ color ] ( x )", "answer(cityid('new york', _))",
		"f(", "f(,)", "a[b[c]]", "'", "f()()", "x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseBracketed(s)
		if err != nil {
			return
		}
		out := FormatBracketed(tr)
		tr2, err := ParseBracketed(out)
		if err != nil {
			t.Fatalf("reparse %q (from %q): %v", out, s, err)
		}
		if tr.String() != tr2.String() {
			t.Fatalf("round trip %q -> %q changed the tree", s, out)
		}
	})
}

func FuzzParseSExpr(f *testing.F) {
	for _, s := range []string{"( f a b )", "(f (g x) y)", "(", "())", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseSExpr(s)
	})
}

// The rule tree of Keysers et al.'s App. A example ("Did M0 executive
// produce M1", its first three levels as printed), and ruleIds of other
// shapes.
func TestParseRuleTree(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"appendix A",
			`{"ruleId": {"type": "SPARQL_GENERATION", "stringValue": "CONCEPT_TO_SPARQL"}, "subTree": [{"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "S=YNQ"}, "subTree": [{"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "YNQ=DID_DP_VP_INDIRECT"}}]}]}`,
			"SPARQL_GENERATION:CONCEPT_TO_SPARQL(GRAMMAR_RULE:S=YNQ(GRAMMAR_RULE:YNQ=DID_DP_VP_INDIRECT))"},
		{"knowledge rule", `{"ruleId": {"type": "KNOWLEDGE", "stringValue": "FreebasePropertyMapping(RolePair(Executive producer, Executive producee), 'ns:film.producer.films_executive_produced')"}, "subTree": []}`,
			"KNOWLEDGE:FreebasePropertyMapping(RolePair(Executive producer, Executive producee), 'ns:film.producer.films_executive_produced')"},
		{"string id", `{"ruleId": "ROOT", "subTree": [{"ruleId": "A"}, {"ruleId": "B"}]}`, "ROOT(A, B)"},
		{"large integers keep their digits", `{"ruleId": {"type": "K", "id": 12345678901234567891}, "subTree": [{"ruleId": {"type": "K", "id": 12345678901234567892}}]}`,
			`{"id":12345678901234567891,"type":"K"}({"id":12345678901234567892,"type":"K"})`},
		{"unicode and & as written", `{"ruleId": {"type": "K", "stringValue": "Cach\u00fan & co", "n": 1}}`, `{"n":1,"stringValue":"Cachún & co","type":"K"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseRuleTree(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.String(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{`{"ruleId": "A"} {}`, `{"subTree": []}`, `[]`, `{"ruleId": "A", "subTree": 3}`} {
		if _, err := ParseRuleTree(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}
