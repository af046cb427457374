package data

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestOutputSetCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	t.Run("commit writes all files", func(t *testing.T) {
		s := NewOutputSet(false)
		for _, n := range []string{"a.jsonl", "sub/b.jsonl"} {
			w, err := s.Create(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, n)
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "sub/b.jsonl"))
		if string(got) != "sub/b.jsonl" {
			t.Fatalf("got %q", got)
		}
		if st, err := os.Stat(filepath.Join(dir, "a.jsonl")); err != nil || st.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v, %v; want 0644", st.Mode().Perm(), err)
		}
		assertNoTemps(t, dir)
	})
	t.Run("abort leaves nothing", func(t *testing.T) {
		s := NewOutputSet(false)
		w, err := s.Create(filepath.Join(dir, "c.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "partial")
		s.Abort()
		if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); !os.IsNotExist(err) {
			t.Fatalf("c.jsonl exists after abort: %v", err)
		}
		assertNoTemps(t, dir)
	})
	t.Run("existing file is refused", func(t *testing.T) {
		s := NewOutputSet(false)
		_, err := s.Create(filepath.Join(dir, "a.jsonl"))
		var ee *ErrExists
		if !errors.As(err, &ee) {
			t.Fatalf("got %v, want ErrExists", err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "a.jsonl"))
		if string(got) != "a.jsonl" {
			t.Fatalf("existing file changed: %q", got)
		}
	})
	t.Run("overwrite replaces", func(t *testing.T) {
		s := NewOutputSet(true)
		w, err := s.Create(filepath.Join(dir, "a.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "new")
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "a.jsonl"))
		if string(got) != "new" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestWriteRecordsThenRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	recs := []Record{{ID: "1", Input: "a", Output: "A"}, {ID: "2", Input: "b", Output: "B", Parts: []string{"B"}}}
	if err := WriteRecords(path, recs, false); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[1].Parts[0] != "B" {
		t.Fatalf("got %+v", back)
	}
	if _, err := ReadRecords(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Fatal("missing file: no error")
	}
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	if _, err := ReadRecords(empty); err == nil {
		t.Fatal("empty file: no error")
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && filepath.Base(p)[0] == '.' {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestOutputSetFoldersOnFailure: the folders Create made for a set that
// then fails (an abort, a write error at Commit as a full disk gives) are
// removed, so a failed command leaves no empty output folder; folders that
// were there before, or that hold something else by then, stay.
func TestOutputSetFoldersOnFailure(t *testing.T) {
	cases := []struct {
		name string
		fail func(s *OutputSet) error
	}{
		{"abort", func(s *OutputSet) error { s.Abort(); return errors.New("aborted") }},
		{"write error at commit", func(s *OutputSet) error {
			s.files[0].tmp.Close() // the flush then fails, as on a full disk
			return s.Commit()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			kept := filepath.Join(dir, "kept")
			os.Mkdir(kept, 0o755)
			s := NewOutputSet(false)
			for _, p := range []string{"new/deeper/a.jsonl", "kept/sub/b.jsonl", "kept/c.jsonl", "other/d.jsonl"} {
				w, err := s.Create(filepath.Join(dir, p))
				if err != nil {
					t.Fatal(err)
				}
				io.WriteString(w, "x")
			}
			os.WriteFile(filepath.Join(dir, "other", "someone-else.txt"), nil, 0o644)
			if err := tc.fail(s); err == nil {
				t.Fatal("no failure")
			}
			for p, want := range map[string]bool{"new": false, "kept": true, "kept/sub": false, "other": true} {
				if _, err := os.Stat(filepath.Join(dir, p)); (err == nil) != want {
					t.Errorf("%s exists: %v, want %v", p, err == nil, want)
				}
			}
			assertNoTemps(t, dir)
		})
	}
}
