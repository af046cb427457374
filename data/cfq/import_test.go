package cfq

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

const importFixture = `[
 {"questionPatternModEntities": "Did M0 direct M1?", "sparqlPatternModEntities": "SELECT count(*) WHERE {\n?x0 ns:film.director.film M1\n}", "ruleTree": {"ruleId": "A", "subTree": [{"ruleId": "B"}]}, "question": "q0", "sparql": "s0"},
 {"questionPatternModEntities": "Who edited M0", "sparqlPatternModEntities": "SELECT DISTINCT ?x0 WHERE {\n?x0 ns:film.editor.film ns:m.0ab\n}", "ruleTree": {"ruleId": "A"}, "question": "q1", "sparql": "s1"},
 {"questionPatternModEntities": "Was M0 a film", "sparqlPatternModEntities": "SELECT count(*) WHERE {\nM0 a ns:film.film\n}", "ruleTree": {"ruleId": "C"}, "question": "q2", "sparql": "s2"},
 {"questionPatternModEntities": "Who wrote M0", "sparqlPatternModEntities": "SELECT DISTINCT ?x0 WHERE {\n?x0 ns:film.writer.film M0\n}", "ruleTree": {"ruleId": "A"}, "question": "q3", "sparql": "s3"}
]`

func importWrite(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// importIDs lists the ids of a part file; an empty part has none.
func importIDs(t *testing.T, path string) string {
	t.Helper()
	recs, err := data.ReadRecords(path)
	if err != nil {
		if strings.Contains(err.Error(), "no records") {
			return ""
		}
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return strings.Join(out, " ")
}

func TestInputFormat(t *testing.T) {
	for _, tc := range []struct {
		format, path, want string
		ok                 bool
	}{
		{"auto", "dataset.JSON", FormatCFQ, true},
		{"auto", "tasks.txt", FormatSCAN, true},
		{"auto", "train.tsv", data.FormatTSV, true},
		{"auto", "data.jsonl", data.FormatJSONL, true},
		{"auto", "noext", data.FormatJSONL, true},
		{"scan", "x.json", FormatSCAN, true},
		{"csv", "x.csv", "csv", false},
	} {
		t.Run(tc.format+" "+tc.path, func(t *testing.T) {
			got, ok := InputFormat(tc.format, tc.path)
			if got != tc.want || ok != tc.ok {
				t.Errorf("InputFormat = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// dataset.json to records and parts, the parts back to a split file, and
// that split applied to the JSONL records (SCAN MCD style: indexes count
// records) gives the same parts.
func TestImportAndExport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := importWrite(t, filepath.Join(dir, "dataset.json"), importFixture)
	sp := importWrite(t, filepath.Join(dir, "split.json"), `{"trainIdxs": [0, 3], "devIdxs": [], "testIdxs": [2]}`)
	out, parts := filepath.Join(dir, "data.jsonl"), filepath.Join(dir, "mcd")
	sum, err := Import(ctx, ImportOptions{In: ds, Format: FormatCFQ, Config: DefaultConfig(), Out: out, Split: sp, OutDir: parts})
	if err != nil {
		t.Fatal(err)
	}
	if sum != (Summary{Records: 4, Train: 2, Dev: 0, Test: 1}) {
		t.Errorf("summary %+v", sum)
	}
	recs, err := data.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("records", func(t *testing.T) {
		if len(recs) != 4 || recs[0].Input != "Did M0 direct M1 ?" || recs[1].Output != "SELECT DISTINCT ?x0 WHERE { ?x0 film.editor.film m_0ab }" {
			t.Fatalf("records %+v", recs)
		}
		if recs[0].Extra["ruleTree"] == nil || recs[0].Extra["question"] != nil {
			t.Errorf("extra %v: want the default kept fields", recs[0].Extra)
		}
	})
	for part, want := range map[string]string{"train": "cfq-0 cfq-3", "dev": "", "test": "cfq-2"} {
		t.Run(part, func(t *testing.T) {
			if got := importIDs(t, filepath.Join(parts, part+".jsonl")); got != want {
				t.Errorf("ids %q, want %q", got, want)
			}
		})
	}
	back := filepath.Join(dir, "back.json")
	t.Run("export", func(t *testing.T) {
		if _, err := ExportSplit(out, parts, back, false); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(back)
		if want := "{\n  \"trainIdxs\": [0, 3],\n  \"devIdxs\": [],\n  \"testIdxs\": [2]\n}\n"; string(b) != want {
			t.Errorf("exported %q, want %q", b, want)
		}
	})
	t.Run("jsonl again", func(t *testing.T) {
		again := filepath.Join(dir, "again")
		if _, err := Import(ctx, ImportOptions{In: out, Format: data.FormatJSONL, Split: back, OutDir: again}); err != nil {
			t.Fatal(err)
		}
		if got := importIDs(t, filepath.Join(again, "train.jsonl")); got != "cfq-0 cfq-3" {
			t.Errorf("train %q", got)
		}
	})
}

// SCAN's tasks.txt: ids are the file's stem and line number, as every
// reader gives them.
func TestImportSCAN(t *testing.T) {
	dir := t.TempDir()
	tasks := importWrite(t, filepath.Join(dir, "tasks.txt"), "IN: jump OUT: I_JUMP\nIN: walk twice OUT: I_WALK I_WALK\nIN: look OUT: I_LOOK\n")
	sp := importWrite(t, filepath.Join(dir, "mcd1.json"), `{"trainIdxs": [0, 2], "devIdxs": [], "testIdxs": [1]}`)
	if _, err := Import(context.Background(), ImportOptions{In: tasks, Format: FormatSCAN, Split: sp, OutDir: filepath.Join(dir, "s")}); err != nil {
		t.Fatal(err)
	}
	if got := importIDs(t, filepath.Join(dir, "s", "test.jsonl")); got != "tasks-2" {
		t.Errorf("test ids %q, want tasks-2", got)
	}
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	ds := importWrite(t, filepath.Join(dir, "dataset.json"), importFixture)
	bad := importWrite(t, filepath.Join(dir, "bad.json"), `[{"questionPatternModEntities": "a"}]`)
	empty := importWrite(t, filepath.Join(dir, "empty.jsonl"), "\n")
	far := importWrite(t, filepath.Join(dir, "far.json"), `{"trainIdxs": [0], "testIdxs": [100000]}`)
	past := importWrite(t, filepath.Join(dir, "past.json"), `{"trainIdxs": [0], "testIdxs": [5]}`)
	dup := importWrite(t, filepath.Join(dir, "dup.json"), `{"trainIdxs": [0], "testIdxs": [0]}`)
	out := filepath.Join(dir, "o")
	for _, tc := range []struct {
		name string
		opts ImportOptions
		want string
	}{
		{"missing field", ImportOptions{In: bad, Format: FormatCFQ, Config: DefaultConfig(), Out: out + ".jsonl"}, `no "sparqlPatternModEntities" field`},
		{"no records", ImportOptions{In: empty, Format: data.FormatJSONL, Out: out + ".jsonl"}, "no records (empty file)"},
		{"index past the file's bytes", ImportOptions{In: ds, Format: FormatCFQ, Split: far, OutDir: out}, "test index 100000 is out of range: " + ds + " has"},
		{"index past the last example", ImportOptions{In: ds, Format: FormatCFQ, Split: past, OutDir: out}, "test index 5 is out of range: the data has 4 examples"},
		{"index twice", ImportOptions{In: ds, Format: FormatCFQ, Split: dup, OutDir: out}, "index 0 is in train and test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			for _, p := range []string{out + ".jsonl", filepath.Join(out, "train.jsonl")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("a failed import left %s", p)
				}
			}
		})
	}
}

// The MCD1 excerpt read as a zip and as a folder gives the same files;
// line 3 of the test part is an example record, so its text is checked
// against dataset.json's import (TestTextRelease checks all three).
func TestImportText(t *testing.T) {
	zipPath := filepath.Join(t.TempDir(), "cfq_data.zip")
	zipFolder(t, mcd1Text, zipPath)
	var first map[string][]byte
	for _, src := range []string{zipPath, mcd1Text} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "mcd1")
			sum, err := ImportText(context.Background(), TextOptions{Src: src, OutDir: out, Out: filepath.Join(out, "all.jsonl")})
			if err != nil {
				t.Fatal(err)
			}
			if sum != (Summary{Records: 9, Train: 3, Dev: 3, Test: 3}) {
				t.Errorf("summary %+v", sum)
			}
			if ids := importIDs(t, filepath.Join(out, "all.jsonl")); ids != "train-1 train-2 train-3 dev-1 dev-2 dev-3 test-1 test-2 test-3" {
				t.Errorf("ids %q", ids)
			}
			recs, err := data.ReadRecords(filepath.Join(out, "test.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if r := recs[2]; r.Input != "Did M0 ' s writer , editor , cinematographer , producer , and director marry and influence M1" || len(r.Extra) != 0 {
				t.Errorf("test-3: %+v", r)
			}
			got := map[string][]byte{}
			for _, f := range []string{"train", "dev", "test", "all"} {
				if got[f], err = os.ReadFile(filepath.Join(out, f+".jsonl")); err != nil {
					t.Fatal(err)
				}
			}
			if first == nil {
				first = got
				return
			}
			for f := range got {
				if !bytes.Equal(got[f], first[f]) {
					t.Errorf("%s.jsonl differs between the zip and the folder", f)
				}
			}
		})
	}
}
