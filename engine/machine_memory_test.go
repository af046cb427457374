package engine

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMemTotal reads MemTotal in bytes and refuses a file without it.
func TestMemTotal(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("MemFree:  10 kB\nMemTotal:       2048 kB\n"), 0o644)
	if b, ok := memTotal(good); !ok || b != 2048*1024 {
		t.Errorf("memTotal = %v, %v; want %d", b, ok, 2048*1024)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("MemFree:  10 kB\n"), 0o644)
	if _, ok := memTotal(bad); ok {
		t.Error("a file without MemTotal read as one")
	}
	if _, ok := memTotal(filepath.Join(dir, "none")); ok {
		t.Error("a missing file read as one")
	}
}
