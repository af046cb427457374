package cfq

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"compbench/data"
)

const mcd1Text = "testdata/mcd1-text"

// textRecords reads every part of the release at p.
func textRecords(t *testing.T, p string) map[int8][]data.Record {
	t.Helper()
	rel, err := OpenText(p)
	if err != nil {
		t.Fatal(err)
	}
	defer rel.Close()
	out := map[int8][]data.Record{}
	for part := Train; part <= Test; part++ {
		err := rel.Each(part, func(r *data.Record, _ int64) error {
			out[part] = append(out[part], *r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// zipFolder writes the files under dir into a zip at dst, names relative
// to dir.
func zipFolder(t *testing.T, dir, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The excerpt's third lines are records 0, 8 and 3 of Google's example
// dataset.json: importing those records must give the release's lines
// exactly, which checks compbench's preprocessing against CFQ's own.
func TestTextRelease(t *testing.T) {
	zipPath := filepath.Join(t.TempDir(), "cfq_data.zip")
	zipFolder(t, mcd1Text, zipPath)
	example := exampleRecords(t)
	for _, tc := range []struct{ name, path string }{
		{"zip", zipPath},
		{"folder above the release", mcd1Text},
		{"the release's folder", mcd1Text + "/data/mcd1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := textRecords(t, tc.path)
			for part, want := range map[int8]int{Train: 0, Dev: 8, Test: 3} {
				recs := got[part]
				if len(recs) != 3 {
					t.Fatalf("%s: %d records, want 3", PartNames[part], len(recs))
				}
				r := recs[2]
				if wantID := PartNames[part] + "-3"; r.ID != wantID {
					t.Errorf("id %q, want %q", r.ID, wantID)
				}
				if r.Input != example[want].Input || r.Output != example[want].Output {
					t.Errorf("%s line 3:\n%q\n%q\nwant example record %d:\n%q\n%q", PartNames[part], r.Input, r.Output, want, example[want].Input, example[want].Output)
				}
			}
			if r := got[Train][0]; r.Input != "Did M2 marry M3 , marry a male person , and marry M4 and M5" || !strings.HasPrefix(r.Output, "SELECT count ( * ) WHERE { ?x0 a people.person . ") {
				t.Errorf("train-1: %+v", r)
			}
		})
	}
}

func exampleRecords(t *testing.T) []data.Record {
	t.Helper()
	f, err := os.Open("testdata/google-example/dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := readAll(t, f, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestTextReleaseErrors(t *testing.T) {
	const q, s = "Did M0 edit M1\n", "SELECT count ( * ) WHERE { M0 film.editor.film M1 }\n"
	full := func() fstest.MapFS {
		m := fstest.MapFS{}
		for part := Train; part <= Test; part++ {
			m[textFile("r", part, "encode")] = &fstest.MapFile{Data: []byte(q + q)}
			m[textFile("r", part, "decode")] = &fstest.MapFile{Data: []byte(s + s)}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		change func(m fstest.MapFS)
		want   string
	}{
		{"no release", func(m fstest.MapFS) { delete(m, "r/train/train_encode.txt") }, "no train/train_encode.txt: want a text release"},
		{"two releases", func(m fstest.MapFS) { m["s/train/train_encode.txt"] = &fstest.MapFile{Data: []byte(q)} }, "holds 2 text releases (r and s)"},
		{"a file missing", func(m fstest.MapFS) { delete(m, "r/test/test_decode.txt") }, "no r/test/test_decode.txt beside r/train/train_encode.txt"},
		{"shorter queries", func(m fstest.MapFS) { m["r/dev/dev_decode.txt"].Data = []byte(s) }, "r/dev/dev_encode.txt and r/dev/dev_decode.txt differ in length: r/dev/dev_decode.txt ends at line 1"},
		{"shorter questions", func(m fstest.MapFS) { m["r/dev/dev_encode.txt"].Data = []byte(q) }, "r/dev/dev_encode.txt ends at line 1"},
		{"blank line", func(m fstest.MapFS) { m["r/test/test_decode.txt"].Data = []byte(s + " \n") }, "r/test/test_decode.txt: line 2 is blank"},
		{"empty part", func(m fstest.MapFS) {
			m["r/dev/dev_encode.txt"].Data, m["r/dev/dev_decode.txt"].Data = nil, nil
		}, "r/dev/dev_encode.txt: no examples"},
		{"line too long", func(m fstest.MapFS) {
			m["r/train/train_encode.txt"].Data = []byte(strings.Repeat("a", maxTextLine+1) + "\n")
		}, "r/train/train_encode.txt: line 1: longer than 64 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := full()
			tc.change(m)
			err := eachText(m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if err := eachText(full()); err != nil {
		t.Errorf("the full release: %v", err)
	}
}

// eachText opens the release in m and reads every part.
func eachText(m fstest.MapFS) error {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	rel := &TextRelease{fsys: m}
	if err := rel.findRoot("rel", names, map[string]int64{}); err != nil {
		return err
	}
	for part := Train; part <= Test; part++ {
		if err := rel.Each(part, func(*data.Record, int64) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

func TestOpenTextNotARelease(t *testing.T) {
	dir := t.TempDir()
	notZip := filepath.Join(dir, "x.zip")
	if err := os.WriteFile(notZip, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"not a zip", notZip, "not a folder or a zip file"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
		{"empty folder", t.TempDir(), "no train/train_encode.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenText(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzTextRelease feeds arbitrary question and query files to the
// reader: it must not panic, and every record it gives has one-space
// text on both sides.
func FuzzTextRelease(f *testing.F) {
	f.Add([]byte("Did M0 edit M1\nWho wrote M0\n"), []byte("SELECT count ( * ) WHERE { M0 film.editor.film M1 }\nSELECT DISTINCT ?x0 WHERE { ?x0 film.writer.film M0 }\n"))
	f.Add([]byte("a\n\nb"), []byte("x\ny\n"))
	f.Add([]byte("a\r\n"), []byte("  x \t y\r\n"))
	f.Fuzz(func(t *testing.T, q, s []byte) {
		m := fstest.MapFS{}
		for part := Train; part <= Test; part++ {
			m[textFile(".", part, "encode")] = &fstest.MapFile{Data: q}
			m[textFile(".", part, "decode")] = &fstest.MapFile{Data: s}
		}
		var names []string
		for n := range m {
			names = append(names, n)
		}
		rel := &TextRelease{fsys: m}
		if err := rel.findRoot("rel", names, map[string]int64{}); err != nil {
			t.Fatal(err)
		}
		_ = rel.Each(Train, func(r *data.Record, _ int64) error {
			for _, x := range []string{r.Input, r.Output} {
				if x == "" || x != strings.Join(strings.Fields(x), " ") {
					t.Fatalf("record %s: text %q", r.ID, x)
				}
			}
			return nil
		})
	})
}
