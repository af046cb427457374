package provenance

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestHash(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, content, sha string
	}{
		// SHA-256 test vectors of FIPS 180-2 and the empty string.
		{"empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Hash("in", p)
			if err != nil {
				t.Fatal(err)
			}
			if f.SHA256 != c.sha || f.Size != int64(len(c.content)) || f.Path != p || f.Role != "in" {
				t.Fatalf("got %+v, want sha %s size %d", f, c.sha, len(c.content))
			}
		})
	}
	if _, err := Hash("in", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: err %v", err)
	}
}

func TestNew(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	os.WriteFile(p, []byte("abc"), 0o644)
	r, err := New([]string{"compbench", "split", "--in", p}, [2]string{"in", p}, [2]string{"dev", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Inputs) != 1 || r.Inputs[0].Role != "in" || strings.Join(r.Command, " ") != "compbench split --in "+p {
		t.Fatalf("record %+v", r)
	}
	if r.Build.Go != runtime.Version() {
		t.Fatalf("go version %q, want %q", r.Build.Go, runtime.Version())
	}
}

func TestBuildString(t *testing.T) {
	cases := []struct {
		name string
		b    Build
		want string
	}{
		{"clean", Build{Module: "compbench", Version: "(devel)", Revision: "abc123", Go: "go1.26.8"}, "compbench (devel) revision abc123 go1.26.8 tags none"},
		{"dirty gpu", Build{Module: "compbench", Version: "(devel)", Revision: "abc123", Modified: true, Go: "go1.26.8", Tags: "gpu"}, "compbench (devel) revision abc123 (modified) go1.26.8 tags gpu"},
		{"no vcs", Build{Module: "compbench", Version: "(devel)", Go: "go1.26.8"}, "compbench (devel) revision unknown go1.26.8 tags none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.b.String(); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
