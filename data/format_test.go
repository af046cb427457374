package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decodeTSV(s string) ([]Record, error) {
	var recs []Record
	err := Decode(strings.NewReader(s), FormatTSV, "f", func(r *Record) error {
		recs = append(recs, *r)
		return nil
	})
	return recs, err
}

func TestDecodeTSV(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Record // nil with err
		err  string
	}{
		{"2 columns", "a b\tA B\nc\tC\n", []Record{{ID: "f-1", Input: "a b", Output: "A B"}, {ID: "f-2", Input: "c", Output: "C"}}, ""},
		{"3 columns", "a\tA\tlexical case\nb\tB\tin_distribution\n",
			[]Record{{ID: "f-1", Input: "a", Output: "A", Category: "lexical case"}, {ID: "f-2", Input: "b", Output: "B", Category: "in_distribution"}}, ""},
		{"CRLF", "a\tA\tx\r\n\r\nb\tB\ty\r\n", []Record{{ID: "f-1", Input: "a", Output: "A", Category: "x"}, {ID: "f-3", Input: "b", Output: "B", Category: "y"}}, ""},
		{"blank lines counted", "\n  \na\tA\n", []Record{{ID: "f-3", Input: "a", Output: "A"}}, ""},
		{"spaces kept", " a \t A\n", []Record{{ID: "f-1", Input: " a ", Output: " A"}}, ""},
		{"1 column", "a\tA\nb\n", nil, "line 2: 1 tab-separated fields, want source<TAB>target or source<TAB>target<TAB>category"},
		{"4 columns", "a\tA\tc\td\n", nil, "line 1: 4 tab-separated fields"},
		{"columns change", "a\tA\tc\nb\tB\n", nil, "line 2: 2 tab-separated fields, but line 1 has 3"},
		{"empty source", "\tA\n", nil, "line 1: field 1 (source) is empty"},
		{"empty target", "a\t \n", nil, "line 1: field 2 (target) is empty"},
		{"empty category", "a\tA\tc\nb\tB\t\n", nil, "line 2: field 3 (category) is empty"},
		{"empty input", "", []Record(nil), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeTSV(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFormatOf(t *testing.T) {
	for path, want := range map[string]string{
		"a/train.tsv": FormatTSV, "gen.TSV": FormatTSV, "x.jsonl": FormatJSONL, "x.json": FormatJSONL, "noext": FormatJSONL,
	} {
		if got := FormatOf(path); got != want {
			t.Errorf("FormatOf(%q) = %q, want %q", path, got, want)
		}
	}
	for path, want := range map[string]string{"a/train.tsv": "train", "tasks_train_mcd1.txt": "tasks_train_mcd1", "b/x.y.tsv": "x.y"} {
		if got := IDPrefix(path); got != want {
			t.Errorf("IDPrefix(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestIDsUniqueAcrossFiles reads the files of the COGS excerpt (COGS's
// published data/ folder, see testdata/cogs/README.md): ids are named after
// each file, so no two files share one, and a file read twice gives the
// same ids.
func TestIDsUniqueAcrossFiles(t *testing.T) {
	seen := map[string]string{}
	wantN := map[string]int{"train": 16, "dev": 6, "test": 6, "gen": 20}
	for _, stem := range []string{"train", "dev", "test", "gen"} {
		t.Run(stem, func(t *testing.T) {
			path := filepath.Join("testdata", "cogs", stem+".tsv")
			recs, err := ReadRecords(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != wantN[stem] {
				t.Fatalf("%d records, want %d", len(recs), wantN[stem])
			}
			for i, r := range recs {
				if want := fmt.Sprintf("%s-%d", stem, i+1); r.ID != want {
					t.Errorf("record %d: id %q, want %q", i+1, r.ID, want)
				}
				if prev, ok := seen[r.ID]; ok {
					t.Errorf("id %q in %s and %s", r.ID, prev, path)
				}
				seen[r.ID] = path
				if r.Category == "" || r.Input == "" || r.Output == "" {
					t.Errorf("record %q: %+v", r.ID, r)
				}
			}
			again, err := ReadRecords(path)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(again) != fmt.Sprint(recs) {
				t.Error("a second read gave other records")
			}
		})
	}
	gen, _ := ReadRecords(filepath.Join("testdata", "cogs", "gen.tsv"))
	if r := gen[11]; r.ID != "gen-12" || r.Category != "cp_recursion" || !strings.HasPrefix(r.Input, "The bee hoped that the girl said that") {
		t.Errorf("gen-12: %+v", r)
	}
}

func TestReadRecordsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, format, err string
	}{
		{"missing", filepath.Join(dir, "none.tsv"), "", "no such file"},
		{"empty tsv", write("empty.tsv", "\n\n"), "", "empty.tsv: no records (empty file)"},
		{"bad tsv", write("bad.tsv", "a\tb\nno tab here\n"), "", "bad.tsv: line 2: 1 tab-separated fields"},
		{"bad jsonl", write("bad.jsonl", "{\"id\":\"a\"}\n{\n"), "", "bad.jsonl: line 2: not a JSON record"},
		{"tsv as jsonl", write("x.tsv", "a\tb\n"), FormatJSONL, "x.tsv: line 1: not a JSON record"},
		{"unknown format", write("y.tsv", "a\tb\n"), "csv", `y.tsv: unknown record format "csv" (want one of jsonl, tsv`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.format == "" {
				_, err = ReadRecords(tc.path)
			} else {
				_, err = ReadFormat(tc.path, tc.format)
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, tc.err)
			}
		})
	}
}

// TestEachRecordCallbackError: the caller's error stops the read and comes
// back as it is, not blamed on a line of the file.
func TestEachRecordCallbackError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.tsv")
	if err := os.WriteFile(p, []byte("a\tA\nb\tB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := fmt.Errorf("full")
	n := 0
	err := EachRecord(p, FormatTSV, func(*Record) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("error %v after %d records, want %v after 1", err, n, stop)
	}
}

// FuzzDecodeTSV: any input either fails with a one-line error naming a line
// or gives records that are TSV lines again: non-empty fields without tabs
// or line breaks, ids in line order, and the same records when written back
// as TSV and read again.
func FuzzDecodeTSV(f *testing.F) {
	for _, s := range []string{
		"a\tA\n", "a\tA\tc\r\nb\tB\tc\n", "\n\na b\tA B\n", "a\tA\tc\td\n", "\tA\n", "a\t\n", "a\tA\tc\nb\tB\n",
		"A rose was helped by a dog .\trose ( x _ 1 ) AND help . theme ( x _ 3 , x _ 1 )\tin_distribution\n",
		"a\rb\tA\n", "a\tA\r\r\n", "x\n\ty\tz", "0\t0\r\r\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		recs, err := decodeTSV(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "line ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q does not name a line, or spans lines", msg)
			}
			return
		}
		var b strings.Builder
		for _, r := range recs {
			fields := []string{r.Input, r.Output}
			if r.Category != "" {
				fields = append(fields, r.Category)
			}
			for _, v := range fields {
				if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\t\n") {
					t.Fatalf("record %+v has an empty field or one with a tab or line break", r)
				}
			}
			// CRLF: the reader drops one "\r", so a last field that ends
			// in "\r" comes back whole.
			b.WriteString(strings.Join(fields, "\t") + "\r\n")
		}
		back, err := decodeTSV(b.String())
		if err != nil {
			t.Fatalf("written back, the records do not read: %v\n%q", err, b.String())
		}
		if len(back) != len(recs) {
			t.Fatalf("%d records read back, want %d", len(back), len(recs))
		}
		for i := range recs {
			r, q := recs[i], back[i]
			if r.Input != q.Input || r.Output != q.Output || r.Category != q.Category {
				t.Fatalf("record %d: read back %+v, want %+v", i+1, q, r)
			}
		}
	})
}
