package cfq

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"compbench/data"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestTokenizePunctuation(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"question mark", "Did M0 direct M1?", "Did M0 direct M1 ?"},
		{"possessive", "Did M0's sister  marry M1", "Did M0 ' s sister marry M1"},
		{"commas", "a writer, producer, and actor", "a writer , producer , and actor"},
		{"all ascii punctuation", "a!b#c_d", "a ! b # c _ d"},
		{"non-ascii kept", "café’s", "café’s"},
		{"empty", "  ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TokenizePunctuation(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPreprocessSPARQL(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"count", "SELECT count(*) WHERE {\n?x0 a M0\n}", "SELECT count ( * ) WHERE { ?x0 a M0 }"},
		{"ns prefix", "?x0 ns:film.film.edited_by M0", "?x0 film.film.edited_by M0"},
		{"mid", "?x0 ns:people.person.parents ns:m.0i5j", "?x0 people.person.parents m_0i5j"},
		{"mid without ns", "m.0abc a b", "m_0abc a b"},
		{"ns inside token kept", "FILTER(?x0!=ns:m.01)", "FILTER(?x0!=ns:m.01)"},
		{"literal backslash n", `?x0 a M0 .\n?x1 a M1`, "?x0 a M0 . ?x1 a M1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PreprocessSPARQL(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func readAll(t *testing.T, r io.Reader, cfg Config) ([]data.Record, error) {
	t.Helper()
	cr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	var recs []data.Record
	for {
		e, err := cr.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			return nil, err
		}
		rec, err := e.Record(cfg)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
}

func TestReaderGolden(t *testing.T) {
	for _, tc := range []struct {
		name, golden string
		cfg          Config
	}{
		{"patterns", "testdata/dataset.golden.jsonl", DefaultConfig()},
		{"raw entities, keep all", "testdata/dataset_raw.golden.jsonl", Config{RawEntities: true, Keep: []string{"all"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Open("testdata/dataset.json")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := readAll(t, f, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			enc := data.NewEncoder(&b)
			for i := range recs {
				if err := enc.Encode(&recs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if *update {
				if err := os.WriteFile(tc.golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(tc.golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("records differ from %s:\n%s", tc.golden, b.Bytes())
			}
		})
	}
}

func TestRecordFields(t *testing.T) {
	f, err := os.Open("testdata/dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readAll(t, f, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	r := recs[0]
	if r.ID != "cfq-0" || r.Input != "Did M0 ' s sister direct M1" {
		t.Errorf("record 0: id %q input %q", r.ID, r.Input)
	}
	if want := "SELECT count ( * ) WHERE { ?x0 people.person.sibling_s M0 . ?x0 film.director.film M1 }"; r.Output != want {
		t.Errorf("output %q, want %q", r.Output, want)
	}
	var keys []string
	for k := range r.Extra {
		keys = append(keys, k)
	}
	if len(keys) != 3 || r.Extra["ruleTree"] == nil {
		t.Errorf("extra keys %v, want the default three", keys)
	}
}

const okElem = `{"questionPatternModEntities": "a", "sparqlPatternModEntities": "b"}`

func TestReaderErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "empty file"},
		{"object", `{"question": "x"}`, "want a JSON array"},
		{"not json", `nope`, "not JSON"},
		{"element not object", `[1]`, "example 0"},
		{"null element", `[null]`, "example 0: null"},
		{"truncated", `[` + okElem + `, {"quest`, "example 1"},
		{"unclosed", `[` + okElem, "after example 0"},
		{"trailing", `[] []`, "data after the closing ]"},
		{"missing field", `[{"questionPatternModEntities": "a"}]`, `example 0: no "sparqlPatternModEntities" field`},
		{"field not string", `[{"questionPatternModEntities": 3, "sparqlPatternModEntities": "q"}]`, "is not a string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, strings.NewReader(tc.in), DefaultConfig())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if err := (Config{Keep: []string{"output"}}).Validate(); err == nil {
		t.Error("keeping a record field: want an error")
	}
}

// The reader takes examples from a stream as they arrive: a writer that
// produces 5,000 examples is read through a pipe without buffering the
// whole array.
func TestReaderStreams(t *testing.T) {
	pr, pw := io.Pipe()
	const n = 5000
	go func() {
		pw.Write([]byte("["))
		for i := 0; i < n; i++ {
			if i > 0 {
				pw.Write([]byte(","))
			}
			fmt.Fprintf(pw, `{"questionPatternModEntities": "q%d", "sparqlPatternModEntities": "SELECT count(*) WHERE { M0 a ns:x%d }"}`, i, i)
		}
		pw.Write([]byte("]"))
		pw.Close()
	}()
	recs, err := readAll(t, pr, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n || recs[n-1].ID != fmt.Sprintf("cfq-%d", n-1) || recs[7].Output != "SELECT count ( * ) WHERE { M0 a x7 }" {
		t.Fatalf("got %d records, last %+v", len(recs), recs[len(recs)-1])
	}
}

func TestSplitFile(t *testing.T) {
	s, err := ReadSplit("testdata/split.json")
	if err != nil {
		t.Fatal(err)
	}
	want := &Split{Train: []int{0, 3}, Dev: []int{1}, Test: []int{2}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("split %+v, want %+v", s, want)
	}
	parts, err := s.Parts(5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(parts, []int8{Train, Dev, Test, Train, None}) {
		t.Errorf("parts %v", parts)
	}
	if _, err := s.Parts(3); err == nil || !strings.Contains(err.Error(), "train index 3 is out of range") {
		t.Errorf("error %v, want out of range", err)
	}
	var b bytes.Buffer
	if err := s.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"trainIdxs\": [0, 3],\n  \"devIdxs\": [1],\n  \"testIdxs\": [2]\n}\n"; b.String() != want {
		t.Errorf("encoded %q, want %q", b.String(), want)
	}
}

func TestDecodeSplitErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", `[1, 2]`, "not a split file"},
		{"empty", ``, "not a split file"},
		{"no train", `{"testIdxs": [1]}`, "needs both"},
		{"no test", `{"trainIdxs": [1]}`, "needs both"},
		{"negative", `{"trainIdxs": [-1], "testIdxs": [2]}`, "train index -1 is negative"},
		{"repeat across", `{"trainIdxs": [1], "devIdxs": [2], "testIdxs": [2]}`, "index 2 is in dev and test"},
		{"repeat within", `{"trainIdxs": [1, 1], "testIdxs": [2]}`, "index 1 is in train and train"},
		{"not integers", `{"trainIdxs": [1.5], "testIdxs": [2]}`, "not a split file"},
		{"trailing", `{"trainIdxs": [1], "testIdxs": [2]} {}`, "data after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSplit([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	s, err := DecodeSplit([]byte(`{"trainIdxs": [4], "testIdxs": [0], "macroSplit": "x"}`))
	if err != nil || len(s.Dev) != 0 {
		t.Errorf("no devIdxs and an extra key: %+v, %v", s, err)
	}
}

func FuzzDecodeSplit(f *testing.F) {
	for _, s := range []string{
		`{"trainIdxs": [0, 3], "devIdxs": [1], "testIdxs": [2]}`,
		`{"trainIdxs": [], "testIdxs": []}`,
		`{"trainIdxs": [99999999999], "testIdxs": [0]}`,
		`{"trainIdxs": [1, 1], "testIdxs": [2]}`,
		`[]`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSplit(b)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Encode(&buf); err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSplit(buf.Bytes())
		if err != nil {
			t.Fatalf("re-decoding %q: %v", buf.Bytes(), err)
		}
		if !reflect.DeepEqual(norm(s), norm(s2)) {
			t.Fatalf("round trip changed %+v to %+v", s, s2)
		}
	})
}

func norm(s *Split) [3][]int {
	out := [3][]int{}
	for i, l := range [][]int{s.Train, s.Dev, s.Test} {
		out[i] = append([]int{}, l...)
	}
	return out
}

func FuzzReader(f *testing.F) {
	// Small seeds, one feature each: the fuzzer mutates them quickly,
	// where a whole 2.6 KB dataset costs its budget in minimisation.
	for _, s := range []string{
		`[{"questionPatternModEntities": "a", "sparqlPatternModEntities": "b"}]`,
		`[{"questionPatternModEntities": "Did M0 's sister direct M1", "sparqlPatternModEntities": "SELECT count(*) WHERE {\n?x0 ns:people.person.sibling_s M0\n}"}]`,
		`[{"questionPatternModEntities": "a", "sparqlPatternModEntities": "b", "ruleTree": {"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "S=>x"}, "subTree": [{"ruleId": "leaf"}]}}]`,
		`[{"questionPatternModEntities": "a", "sparqlPatternModEntities": "b", "complexityMeasures": {"n": 1}, "ruleIds": ["r1"]}, {"question": "q"}]`,
		`[{"questionPatternModEntities": "a", "sparqlPatternModEntities": "SELECT DISTINCT ?x0 WHERE {\n?x0 a ns:film.film .\nFILTER ( ?x0 != M0 )\n}"}]`,
		`[]`,
		`[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := readAll(t, bytes.NewReader(b), DefaultConfig())
		if err != nil {
			return
		}
		for i, r := range recs {
			if r.ID != fmt.Sprintf("cfq-%d", i) {
				t.Fatalf("record %d has id %q", i, r.ID)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Fatalf("record %d does not marshal: %v", i, err)
			}
		}
	})
}

// BenchmarkReader measures streaming conversion of CFQ-sized examples
// (rule trees included) to records; bytes/s is the input rate.
func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("[")
	const n = 2000
	tree := `{"ruleId": {"type": "GRAMMAR_RULE", "stringValue": "S=>did NP VP"}, "subTree": [` +
		strings.Repeat(`{"ruleId": {"type": "KNOWLEDGE", "stringValue": "x"}, "subTree": []},`, 40) + `{"ruleId": "leaf"}]}`
	for i := 0; i < n; i++ {
		if i > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, `{"question": "Did Ann Lee's sister direct Blue Sky %d?", "questionPatternModEntities": "Did M0 's sister direct M1", "sparql": "SELECT count(*) WHERE {\n?x0 ns:people.person.sibling_s ns:m.0a1b .\n?x0 ns:film.director.film ns:m.0c2d\n}", "sparqlPatternModEntities": "SELECT count(*) WHERE {\n?x0 ns:people.person.sibling_s M0 .\n?x0 ns:film.director.film M1\n}", "complexityMeasures": {"a": 1, "b": 2}, "ruleTree": %s}`, i, tree)
	}
	buf.WriteString("]")
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		var out bytes.Buffer
		enc := data.NewEncoder(&out)
		r, err := NewReader(bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rec, err := e.Record(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.Encode(&rec); err != nil {
				b.Fatal(err)
			}
		}
	}
}
