package data

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		rec  Record
		want string
	}{
		{"minimal", Record{ID: "a", Input: "jump", Output: "JUMP"},
			`{"id":"a","input":"jump","output":"JUMP"}`},
		{"scan", Record{ID: "b", Input: "jump twice", Output: "JUMP JUMP", Parts: []string{"JUMP JUMP"},
			Tree: &Tree{Label: "P->Q twice", Children: []*Tree{{Label: "a->jump"}}}},
			`{"id":"b","input":"jump twice","output":"JUMP JUMP","parts":["JUMP JUMP"],"tree":{"label":"P->Q twice","children":[{"label":"a->jump"}]}}`},
		{"robustfill", Record{ID: "c", Input: "x", Output: "y", Inputs: []string{"a b"}, Outputs: []string{"A"},
			Program: json.RawMessage(`[["GetToken", "ALPHANUM", 3]]`)},
			`{"id":"c","input":"x","output":"y","inputs":["a b"],"outputs":["A"],"program":[["GetToken","ALPHANUM",3]]}`},
		{"escapes", Record{ID: "d\"q", Input: "tab\there <&>", Output: "é"},
			`{"id":"d\"q","input":"tab\there <&>","output":"é"}`},
		{"category", Record{ID: "f", Input: "A cat ran .", Output: "cat ( x _ 1 )", Category: "cp_recursion", Parts: []string{"p"},
			Extra: map[string]json.RawMessage{"aaa": json.RawMessage(`true`)}},
			`{"id":"f","input":"A cat ran .","output":"cat ( x _ 1 )","category":"cp_recursion","parts":["p"],"aaa":true}`},
		{"extra fields sorted", Record{ID: "e", Extra: map[string]json.RawMessage{"zeta": json.RawMessage(`1`), "alpha": json.RawMessage(`{"k": [1, 2]}`)}},
			`{"id":"e","input":"","output":"","alpha":{"k":[1,2]},"zeta":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encodeOne(&tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("marshal:\n got %s\nwant %s", got, tc.want)
			}
			var back Record
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := encodeOne(&back)
			if string(again) != tc.want {
				t.Fatalf("round trip:\n got %s\nwant %s", again, tc.want)
			}
		})
	}
}

// encodeOne writes r as the Encoder does, without the trailing newline.
// (json.Marshal would HTML-escape the result; files keep <, > and & readable.)
func encodeOne(r *Record) ([]byte, error) {
	var b bytes.Buffer
	if err := NewEncoder(&b).Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func TestDecodeRecordsErrors(t *testing.T) {
	cases := []struct {
		name, in, wantErr string
	}{
		{"bad json", "{\"id\":\"a\"}\n{oops\n", "line 2: not a JSON record"},
		{"no id", `{"input":"x"}`, "line 1: record has no \"id\""},
		{"repeated id", "{\"id\":\"a\"}\n\n{\"id\":\"a\"}\n", "line 3: id \"a\" repeats (first on line 1)"},
		{"wrong type", `{"id":"a","parts":"x"}`, `field "parts"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRecords(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestDecodeCategory: "category" is a field of its own (a string; null is
// none); other unknown keys still go to Extra.
func TestDecodeCategory(t *testing.T) {
	recs, err := DecodeRecords(strings.NewReader(`{"id":"a","category":"pp_recursion","zeta":1}` + "\n" + `{"id":"b","category":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Category != "pp_recursion" || len(recs[0].Extra) != 1 || string(recs[0].Extra["zeta"]) != "1" || recs[1].Category != "" || recs[1].Extra != nil {
		t.Fatalf("got %+v", recs)
	}
	if _, err := DecodeRecords(strings.NewReader(`{"id":"a","category":3}`)); err == nil || !strings.Contains(err.Error(), `line 1: not a JSON record: field "category"`) {
		t.Fatalf("a number as category: error %v", err)
	}
}

func TestDecodeRecordsSkipsBlankLines(t *testing.T) {
	recs, err := DecodeRecords(strings.NewReader("\n{\"id\":\"a\"}\n   \n{\"id\":\"b\",\"cfq\":true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].ID != "b" || string(recs[1].Extra["cfq"]) != "true" {
		t.Fatalf("got %+v", recs)
	}
}

func FuzzDecodeRecords(f *testing.F) {
	f.Add(`{"id":"a","input":"x","output":"y","tree":{"label":"r","children":[{"label":"s"}]}}`)
	f.Add(`{"id":"a","program":[["Trim"]],"extra":[1,2,{"k":null}]}`)
	f.Add("{\"id\":\"a\"}\n{\"id\":\"b\"}")
	f.Add(`{"id":"a","category":"cp_recursion","z":0}`)
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := DecodeRecords(strings.NewReader(s))
		if err != nil {
			return
		}
		for i := range recs {
			p, err := encodeOne(&recs[i])
			if err != nil {
				t.Fatalf("decoded record does not encode: %v", err)
			}
			var back Record
			if err := json.Unmarshal(p, &back); err != nil {
				t.Fatalf("encoded record does not decode: %v\n%s", err, p)
			}
			q, _ := encodeOne(&back)
			if string(p) != string(q) {
				t.Fatalf("not stable:\n%s\n%s", p, q)
			}
		}
	})
}
