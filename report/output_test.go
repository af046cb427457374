package report

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInside: an output is inside a reported folder however spelled,
// through a symbolic link or "..", and a sibling is not.
func TestInside(t *testing.T) {
	root := t.TempDir()
	sweep := filepath.Join(root, "sweep")
	if err := os.MkdirAll(filepath.Join(sweep, "cells"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(sweep, "cells"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(sweep, "report.md"), true},
		{filepath.Join(sweep, "new", "fig"), true},
		{sweep, true},
		{link + "/../report.md", true}, // not Join, which would clean the ".."
		{filepath.Join(root, "report.md"), false},
		{filepath.Join(root, "sweep2", "report.md"), false},
	} {
		if got := Inside(c.path, sweep); got != c.want {
			t.Errorf("Inside(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	if Inside(filepath.Join(root, "x"), filepath.Join(root, "missing")) {
		t.Error("a missing folder holds something")
	}
}
