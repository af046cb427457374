package eval

import (
	"strings"
	"testing"

	"compbench/data"
)

func gold(pairs ...string) []data.Record {
	var rs []data.Record
	for i := 0; i+1 < len(pairs); i += 2 {
		rs = append(rs, data.Record{ID: pairs[i], Output: pairs[i+1]})
	}
	return rs
}

func preds(pairs ...string) []Prediction {
	var ps []Prediction
	for i := 0; i+1 < len(pairs); i += 2 {
		ps = append(ps, Prediction{ID: pairs[i], Text: pairs[i+1]})
	}
	return ps
}

func TestJoin(t *testing.T) {
	g := gold("a", "x", "b", "y")
	if _, err := Join(g, preds("a", "x"), false); err == nil || !strings.Contains(err.Error(), `1 gold ids have no prediction ("b")`) {
		t.Fatalf("missing id: %v", err)
	}
	if _, err := Join(g, preds("a", "x", "b", "y", "c", "z"), false); err == nil || !strings.Contains(err.Error(), `not in the gold file ("c")`) {
		t.Fatalf("unknown id: %v", err)
	}
	j, err := Join(g, preds("a", "x", "c", "z"), true)
	if err != nil || len(j.MissingPred) != 1 || len(j.Unknown) != 1 || j.Pairs[1].Pred != nil {
		t.Fatalf("allow missing: %+v %v", j, err)
	}
	ex, s, err := Score(j, Options{})
	if err != nil || s.Correct != 1 || s.N != 2 || !ex[1].Missing || ex[1].Correct {
		t.Fatalf("score with missing: %+v %+v %v", ex, s, err)
	}
}

func TestScoreNormalizers(t *testing.T) {
	for _, tc := range []struct {
		name, norm, gold, pred string
		want                   bool
	}{
		{"plain", "", "a b", "a b", true},
		{"plain spaces differ", "", "a b", "a  b", false},
		{"whitespace", "whitespace", "a b", " a  b ", true},
		{"sep", "sep", "JUMP | WALK", "JUMP WALK", true},
		{"sep keeps order", "sep", "JUMP | WALK", "WALK JUMP", false},
		{"conjuncts", "sorted-conjuncts", "and(a, b)", "and(b,a)", true},
		{"filters", "ordered-filters", "( filter ( filter X a ) b )", "( filter ( filter X b ) a )", true},
		{"chain", "sep,whitespace", "A  |  B", "A B", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, err := ParseNormalizers(tc.norm, DefaultSeparator)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := Join(gold("1", tc.gold), preds("1", tc.pred), false)
			_, s, err := Score(j, Options{Normalizers: ns})
			if err != nil || (s.Correct == 1) != tc.want {
				t.Fatalf("correct=%d err=%v", s.Correct, err)
			}
		})
	}
	if _, err := ParseNormalizers("sep,bogus", "|"); err == nil || !strings.Contains(err.Error(), `unknown normalizer "bogus"`) {
		t.Fatalf("bad normalizer: %v", err)
	}
}

func TestTokenMatch(t *testing.T) {
	for _, tc := range []struct {
		name, gold, pred string
		acc              float64
		prefix           int
	}{
		{"exact", "A B C", "A B C", 1, 3},
		{"one wrong", "A B C", "A X C", 2.0 / 3, 1},
		{"short", "A B C D", "A B", 0.5, 2},
		{"long", "A B", "A B C D", 0.5, 2},
		{"first wrong", "A B", "X B", 0.5, 0},
		{"both empty", "", "", 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc, pre := tokenMatch(strings.Fields(tc.gold), strings.Fields(tc.pred))
			if acc != tc.acc || pre != tc.prefix {
				t.Fatalf("got %v %d want %v %d", acc, pre, tc.acc, tc.prefix)
			}
		})
	}
	j, _ := Join(gold("1", "A B C", "2", "A B"), preds("1", "A B C", "2", "X B"), false)
	_, s, _ := Score(j, Options{Tokens: true})
	if *s.TokenAccuracy != 0.75 || *s.MeanPrefix != 1.5 {
		t.Fatalf("summary %v %v", *s.TokenAccuracy, *s.MeanPrefix)
	}
}

func TestExecute(t *testing.T) {
	g := []data.Record{{
		ID: "1", Output: "GetToken ALPHANUM 3 | GetFrom ':' | GetFirst CHAR 4",
		Inputs: []string{"Ud 9:25,JV3 Obb"}, Outputs: []string{"2525,JV3 ObbUd 9"},
	}, {
		ID: "2", Output: "x", Inputs: []string{"ab"}, Outputs: []string{"ab"},
	}, {
		ID: "3", Output: "x", Inputs: []string{"ab"}, Outputs: []string{"zz"},
	}}
	j, _ := Join(g, preds(
		"1", "GetToken ALPHANUM 3 GetFrom ':' GetFirst CHAR 4", // same program without separators
		"2", "Concat ( ((", // does not parse
		"3", "GetToken ALPHANUM 1", // parses, wrong output
	), false)
	ex, s, err := Score(j, Options{Execute: true})
	if err != nil {
		t.Fatal(err)
	}
	if !ex[0].Correct || ex[1].Correct || ex[1].ParseError == "" || ex[2].Correct || ex[2].ParseError != "" {
		t.Fatalf("examples %+v", ex)
	}
	if s.ParseFailures != 1 || s.Correct != 1 {
		t.Fatalf("summary %+v", s)
	}
	j, _ = Join([]data.Record{{ID: "1", Output: "x"}}, preds("1", "x"), false)
	if _, _, err := Score(j, Options{Execute: true}); err == nil || !strings.Contains(err.Error(), "needs \"inputs\"") {
		t.Fatalf("gold without inputs: %v", err)
	}
}
