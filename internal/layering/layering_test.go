package layering

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// floors is the package map, lowest floor first: a package may import
// packages of its own floor or below, never above. A package missing here
// fails the test, so a new one is placed on purpose.
var floors = [][]string{
	// Utilities with no compbench imports of their own.
	{"blas", "progress", "safetensors", "vecmath", "kernels/cudaguard"},
	// Records, generators, trees and splits; provenance fingerprints files.
	{"data", "data/cfq", "data/robustfill", "data/scan", "data/scfg", "data/split", "data/structure", "data/tasks", "provenance"},
	// Kernels and their CPU references, graph ops, and scoring.
	{"kernels", "ops", "eval"},
	// The one executor, and attention.
	{"engine", "attention"},
	// Model definitions, and the helpers of their reference tests.
	{"models", "models/gpt2", "models/lstm", "models/pretrained", "models/transformer", "internal/reftest"},
	// Training, decoding, language-model scoring.
	{"train", "lm"},
	{"sweep"},
	{"report"},
	{"cmd/compbench", "internal/layering"},
}

// TestLayering reads every package's imports with go list, under each
// build configuration, and refuses an import from a floor above.
func TestLayering(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, tags := range []string{"", "gpu", "gpuemu", "purego"} {
		t.Run("tags="+tags, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-tags", tags, "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, v := range violations(floors, strings.Split(strings.TrimSpace(string(out)), "\n")) {
				t.Error(v)
			}
		})
	}
}

// violations checks go list lines "PKG IMPORT...": each package must be on
// a floor, and import nothing of compbench's on a floor above its own.
func violations(floors [][]string, lines []string) []string {
	floor := map[string]int{}
	for i, f := range floors {
		for _, p := range f {
			floor["compbench/"+p] = i
		}
	}
	name := func(i int) string { return strings.Join(floors[i], ", ") }
	var bad []string
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		at, ok := floor[f[0]]
		if !ok {
			bad = append(bad, f[0]+" is on no floor: add it to floors")
			continue
		}
		for _, imp := range f[1:] {
			if to, ok := floor[imp]; ok && to > at {
				bad = append(bad, fmt.Sprintf("%s (floor %s) imports %s (floor %s)", f[0], name(at), imp, name(to)))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// TestViolations: the check refuses an upward import and an unplaced
// package, and accepts imports on the same floor or below.
func TestViolations(t *testing.T) {
	fl := [][]string{{"data", "data/scan"}, {"train"}}
	cases := []struct {
		name  string
		lines []string
		want  int
	}{
		{"downward and sideways", []string{"compbench/train compbench/data fmt", "compbench/data/scan compbench/data"}, 0},
		{"upward", []string{"compbench/data compbench/train"}, 1},
		{"unplaced", []string{"compbench/newpkg compbench/data"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := violations(fl, c.lines); len(got) != c.want {
				t.Errorf("%d violations %q, want %d", len(got), got, c.want)
			}
		})
	}
}
