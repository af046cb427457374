package eval

import (
	"strings"
	"testing"
)

func TestDecodePredictions(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		err      string
	}{
		{"ok", `{"id":"a","prediction":"x y"}` + "\n\n" + `{"id":"b","prediction":"","score":-1.5,"beam":["p","q"]}`, 2, ""},
		{"integer id", `{"id":7,"prediction":"x"}`, 1, ""},
		{"duplicate", `{"id":"a","prediction":"x"}` + "\n" + `{"id":"a","prediction":"y"}`, 0, "line 2: id \"a\" repeats (first on line 1)"},
		{"missing id", `{"prediction":"x"}`, 0, `line 1: missing "id"`},
		{"empty id", `{"id":"","prediction":"x"}`, 0, `empty "id"`},
		{"float id", `{"id":1.5,"prediction":"x"}`, 0, "want a string or an integer"},
		{"missing prediction", `{"id":"a"}`, 0, `has no "prediction"`},
		{"bad json", `{"id":"a",`, 0, "line 1: not a prediction object"},
		{"wrong type", `{"id":"a","prediction":3}`, 0, "line 1: not a prediction object"},
		{"empty", "", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := DecodePredictions(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(ps) != tc.n {
				t.Fatalf("got %d predictions, err %v", len(ps), err)
			}
		})
	}
	ps, _ := DecodePredictions(strings.NewReader(`{"id":"b","prediction":"","score":-1.5,"beam":["p","q"]}`))
	if *ps[0].Score != -1.5 || len(ps[0].Beam) != 2 {
		t.Fatalf("score/beam not read: %+v", ps[0])
	}
}

func FuzzDecodePredictions(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","prediction":"x"}`,
		`{"id":1,"prediction":"x","score":0.5,"beam":["a"]}` + "\n" + `{"id":"1","prediction":"y"}`,
		`{"id":null}`, "\n\n", `[1,2]`, `{"id":"a","prediction":"\u00e9"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := DecodePredictions(strings.NewReader(in))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if p.ID == "" || seen[p.ID] {
				t.Fatalf("bad id accepted: %q", p.ID)
			}
			seen[p.ID] = true
		}
	})
}
