package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCorrelatePoints(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := write("two.jsonl", `{"split":"a","x":0.1,"y":0.9}`, `{"split":"b","x":0.5,"y":0.2}`)
	three := write("three.jsonl", `{"split":"a","x":0,"y":0}`, `{"split":"b","x":1,"y":1}`, `{"split":"c","x":2,"y":1}`)
	cases := []struct {
		name    string
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		// Two points always give r = ±1: refused, not reported.
		{"two points", []string{"correlate", "--points", two}, 1, "", "at least 3"},
		// r of (0,0), (1,1), (2,1) is √3/2 = 0.8660.
		{"three points", []string{"correlate", "--points", three}, 0, "0.8660  (n = 3 splits)", ""},
		{"json says n", []string{"correlate", "--points", three, "--json"}, 0, `"n": 3`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(out, c.wantOut) || !strings.Contains(errs, c.wantErr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errs, c.code, c.wantOut, c.wantErr)
			}
		})
	}
}
