// Package provenance records what produced a result: the compbench build
// (module version, VCS revision, dirty flag, Go version, build tags), the
// full command line, and the size and SHA-256 of every input file. Run
// folders and split.json carry one Record, so a number can be traced to
// the exact code and data that made it.
package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"compbench/data"
)

// Build describes the running binary.
type Build struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the module version ("(devel)" for a build from a checkout).
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from ("" when the
	// build had no VCS information, e.g. go test or -buildvcs=false).
	Revision string `json:"revision,omitempty"`
	// Modified is true when the checkout had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// Time is the commit time of Revision.
	Time string `json:"vcs_time,omitempty"`
	// Go is the toolchain version.
	Go string `json:"go"`
	// Tags are the build tags (e.g. "gpu", "purego"), "" for the default build.
	Tags string `json:"tags,omitempty"`
}

// Current reads the running binary's build information.
func Current() Build {
	b := Build{Module: "compbench", Version: "(unknown)", Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Path != "" {
		b.Module = info.Main.Path
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		case "-tags":
			b.Tags = s.Value
		}
	}
	return b
}

// String is the one-line form printed by "compbench version".
func (b Build) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s", b.Module, b.Version)
	if b.Revision != "" {
		fmt.Fprintf(&sb, " revision %s", b.Revision)
		if b.Modified {
			sb.WriteString(" (modified)")
		}
	} else {
		sb.WriteString(" revision unknown")
	}
	fmt.Fprintf(&sb, " %s", b.Go)
	if b.Tags != "" {
		fmt.Fprintf(&sb, " tags %s", b.Tags)
	} else {
		sb.WriteString(" tags none")
	}
	return sb.String()
}

// File identifies an input by its path as given, size and SHA-256.
type File struct {
	// Role says what the file was to the command ("train", "in", "pool", ...).
	Role string `json:"role"`
	// Path is the path as given on the command line.
	Path string `json:"path"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

// Hash fingerprints the file at path.
func Hash(role, path string) (File, error) {
	f, err := data.Open(path)
	if err != nil {
		return File{}, fmt.Errorf("fingerprint %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("fingerprint %s: %w", path, err)
	}
	return File{Role: role, Path: path, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// Record is what a result carries about its making.
type Record struct {
	// Build is the binary that wrote the result.
	Build Build `json:"compbench"`
	// Command is the full command line, program name first.
	Command []string `json:"command"`
	// Inputs are the files the command read, in the order given.
	Inputs []File `json:"inputs"`
}

// New builds a Record for the command line args (program name first) and
// the input files, given as role/path pairs; empty paths are skipped.
func New(args []string, inputs ...[2]string) (Record, error) {
	r := Record{Build: Current(), Command: append([]string(nil), args...), Inputs: []File{}}
	for _, in := range inputs {
		if in[1] == "" {
			continue
		}
		f, err := Hash(in[0], in[1])
		if err != nil {
			return Record{}, err
		}
		r.Inputs = append(r.Inputs, f)
	}
	return r, nil
}
