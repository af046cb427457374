package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"command", []string{"version"}, 0},
		{"flag", []string{"--version"}, 0},
		{"stray argument", []string{"version", "x"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, c.wantCode, errs)
			}
			if code != 0 {
				return
			}
			// The test binary carries no VCS stamp; the module, Go version
			// and tags are always there.
			for _, want := range []string{"compbench ", runtime.Version(), "revision ", "tags "} {
				if !strings.Contains(out, want) {
					t.Errorf("version %q lacks %q", out, want)
				}
			}
		})
	}
}
