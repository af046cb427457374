package split

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadSplitPool: a split.json written when text pools' ids were
// scan-N / line-N still resolves against the same pool, whose ids are now
// named after the file; a split with the new ids, or a JSONL pool, is read
// as it is.
func TestLoadSplitPool(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	txt := write("tasks.txt", "IN: jump OUT: I_JUMP\n\nIN: walk OUT: I_WALK\n")
	tsv := write("pool.tsv", "a\tA\nb\tB\n")
	jsonl := write("pool.jsonl", `{"id":"scan-1","input":"jump","output":"JUMP"}`+"\n")
	tests := []struct {
		name, path string
		ids        []string // split.json's train ids
		want       string   // the pool's ids
	}{
		{"legacy scan ids", txt, []string{"scan-3"}, "scan-1 scan-3"},
		{"new scan ids", txt, []string{"tasks-3"}, "tasks-1 tasks-3"},
		{"legacy tsv ids", tsv, []string{"line-2", "line-1"}, "line-1 line-2"},
		{"new tsv ids", tsv, []string{"pool-2"}, "pool-1 pool-2"},
		{"jsonl", jsonl, []string{"scan-1"}, "scan-1"},
		{"not a line id", txt, []string{"scan-x"}, "tasks-1 tasks-3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &SplitFile{Train: tc.ids}
			pool, err := LoadSplitPool(f, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range pool {
				got = append(got, r.ID)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("ids %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := LoadSplitPool(&SplitFile{}, filepath.Join(dir, "none.txt")); err == nil {
		t.Error("a missing pool was read")
	}
}
