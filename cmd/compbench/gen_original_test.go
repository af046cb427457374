package main

import (
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

func TestGenSCANOriginal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "pool.jsonl")
	mustRun(t, "gen", "scan-original", "--out", out)
	recs, err := data.ReadRecords(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 20910 || recs[0].ID != "scan-orig-1" || recs[0].Input != "walk" || recs[0].Output != "WALK" {
		t.Fatalf("%d records, first %+v", len(recs), recs[0])
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"exists", []string{"gen", "scan-original", "--out", out}, 1, "exists"},
		{"no out", []string{"gen", "scan-original"}, 2, "--out is required"},
		{"stray argument", []string{"gen", "scan-original", "x", "--out", out}, 2, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
		})
	}
}
