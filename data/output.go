package data

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// OutputSet writes several files all-or-nothing: each file is written to a
// temporary name beside its destination and renamed into place only when
// Commit is called, so a failure never leaves a partial result. Unless
// overwrite is set, an existing destination is an error: results are never
// silently replaced.
type OutputSet struct {
	overwrite bool
	files     []*pendingFile
}

type pendingFile struct {
	dest string
	tmp  *os.File
	buf  *bufio.Writer
}

// NewOutputSet starts an empty set of pending files.
func NewOutputSet(overwrite bool) *OutputSet { return &OutputSet{overwrite: overwrite} }

// ErrExists reports a destination that already exists.
type ErrExists struct{ Path string }

func (e *ErrExists) Error() string {
	return fmt.Sprintf("%s already exists; choose another output or pass --force to replace it", e.Path)
}

// CheckFree fails with *ErrExists if path exists and overwrite is false.
func CheckFree(path string, overwrite bool) error {
	if overwrite {
		return nil
	}
	if _, err := os.Stat(path); err == nil {
		return &ErrExists{Path: path}
	}
	return nil
}

// Create opens a pending file for dest, creating dest's folder if needed.
func (s *OutputSet) Create(dest string) (io.Writer, error) {
	if err := CheckFree(dest, s.overwrite); err != nil {
		s.Abort()
		return nil, err
	}
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.Abort()
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		s.Abort()
		return nil, fmt.Errorf("create %s: %w", dest, err)
	}
	pf := &pendingFile{dest: dest, tmp: tmp, buf: bufio.NewWriterSize(tmp, 1<<20)}
	s.files = append(s.files, pf)
	return pf.buf, nil
}

// Commit flushes and renames every pending file into place.
func (s *OutputSet) Commit() error {
	for _, f := range s.files {
		if err := f.buf.Flush(); err != nil {
			s.Abort()
			return fmt.Errorf("write %s: %w", f.dest, err)
		}
		// os.CreateTemp makes 0600 files; results are for sharing.
		if err := f.tmp.Chmod(0o644); err != nil {
			s.Abort()
			return fmt.Errorf("write %s: %w", f.dest, err)
		}
		if err := f.tmp.Close(); err != nil {
			s.Abort()
			return fmt.Errorf("write %s: %w", f.dest, err)
		}
	}
	for _, f := range s.files {
		if err := CheckFree(f.dest, s.overwrite); err != nil {
			s.Abort()
			return err
		}
	}
	for i, f := range s.files {
		if err := os.Rename(f.tmp.Name(), f.dest); err != nil {
			for _, g := range s.files[i:] {
				os.Remove(g.tmp.Name())
			}
			return fmt.Errorf("rename into %s: %w", f.dest, err)
		}
	}
	s.files = nil
	return nil
}

// Abort removes every pending file. It is safe to call more than once.
func (s *OutputSet) Abort() {
	for _, f := range s.files {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
	}
	s.files = nil
}
