package data

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStaleTempsRemoved: writing an output removes the temporaries that
// killed writes of the same output left, and nothing else.
func TestStaleTempsRemoved(t *testing.T) {
	cases := []struct {
		name string
		gone bool
	}{
		{".out.jsonl.tmp-123456", true},
		{".out.jsonl.tmp-9", true},
		{".out.jsonl.tmp-", false},      // not a name Create gives
		{".out.jsonl.tmp-12ab", false},  // not a name Create gives
		{".other.jsonl.tmp-123", false}, // another output's
		{"out.jsonl.tmp-123", false},    // not hidden: a user's file
		{".out.jsonl.tmp-77/", false},   // a folder
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if c.name[len(c.name)-1] == '/' {
			os.Mkdir(p, 0o755)
			continue
		}
		os.WriteFile(p, []byte("half-written"), 0o644)
	}
	set := NewOutputSet(false)
	w, err := set.Create(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("{}\n"))
	if err := set.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(dir, c.name))
			if gone := os.IsNotExist(err); gone != c.gone {
				t.Errorf("removed %v, want %v", gone, c.gone)
			}
		})
	}
}
