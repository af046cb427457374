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
	// dirs are the folders Create made, parents first: Abort removes
	// them (when empty), so a failed command leaves no empty output folder.
	dirs []string
}

type pendingFile struct {
	dest   string
	tmp    *os.File // the temporary file, or dest itself when direct
	buf    *bufio.Writer
	direct bool // dest is a device or pipe (/dev/null, /dev/stdout): written in place
}

// NewOutputSet starts an empty set of pending files.
func NewOutputSet(overwrite bool) *OutputSet { return &OutputSet{overwrite: overwrite} }

// ErrExists reports a destination that already exists.
type ErrExists struct{ Path string }

func (e *ErrExists) Error() string {
	return fmt.Sprintf("%s already exists; choose another output or pass --force to replace it", e.Path)
}

// CheckFree fails with *ErrExists if path exists and overwrite is false.
// A device or pipe (/dev/null, /dev/stdout) holds no result to protect, so
// it is always free.
func CheckFree(path string, overwrite bool) error {
	if overwrite {
		return nil
	}
	if st, err := os.Stat(path); err == nil && !isStream(st) {
		return &ErrExists{Path: path}
	}
	return nil
}

// isStream reports a destination that is written in place rather than
// replaced: anything but a regular file or a folder. Renaming a temporary
// file onto /dev/null would replace the device itself.
func isStream(st os.FileInfo) bool { return !st.Mode().IsRegular() && !st.IsDir() }

// Create opens a pending file for dest, creating dest's folder if needed.
func (s *OutputSet) Create(dest string) (io.Writer, error) {
	if err := CheckFree(dest, s.overwrite); err != nil {
		s.Abort()
		return nil, err
	}
	if st, err := os.Stat(dest); err == nil && st.IsDir() {
		s.Abort()
		return nil, fmt.Errorf("%s is a folder; name a file to write", dest)
	} else if err == nil && isStream(st) {
		f, err := os.OpenFile(dest, os.O_WRONLY, 0)
		if err != nil {
			s.Abort()
			return nil, fmt.Errorf("open %s: %w", dest, err)
		}
		pf := &pendingFile{dest: dest, tmp: f, buf: bufio.NewWriterSize(f, 1<<20), direct: true}
		s.files = append(s.files, pf)
		return pf.buf, nil
	}
	dir := filepath.Dir(dest)
	if err := s.mkdirAll(dir); err != nil {
		s.Abort()
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	removeStaleTemps(dest)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		s.Abort()
		return nil, fmt.Errorf("create %s: %w", dest, err)
	}
	pf := &pendingFile{dest: dest, tmp: tmp, buf: bufio.NewWriterSize(tmp, 1<<20)}
	s.files = append(s.files, pf)
	return pf.buf, nil
}

// mkdirAll is os.MkdirAll that records the folders it makes.
func (s *OutputSet) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !os.IsExist(err) {
			return err
		} else if err == nil {
			s.dirs = append(s.dirs, missing[i])
		}
	}
	return nil
}

// Commit flushes and renames every pending file into place.
func (s *OutputSet) Commit() error {
	for _, f := range s.files {
		if err := f.buf.Flush(); err != nil {
			s.Abort()
			return fmt.Errorf("write %s: %w", f.dest, err)
		}
		if f.direct {
			if err := f.tmp.Close(); err != nil {
				s.Abort()
				return fmt.Errorf("write %s: %w", f.dest, err)
			}
			continue
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
		if f.direct {
			continue
		}
		if err := os.Rename(f.tmp.Name(), f.dest); err != nil {
			for _, g := range s.files[i:] {
				if !g.direct {
					os.Remove(g.tmp.Name())
				}
			}
			return fmt.Errorf("rename into %s: %w", f.dest, err)
		}
	}
	s.files, s.dirs = nil, nil
	return nil
}

// Abort removes every pending file, and the folders Create made for them
// where nothing else was put in them meanwhile. It is safe to call more
// than once.
func (s *OutputSet) Abort() {
	for _, f := range s.files {
		f.tmp.Close()
		if !f.direct {
			os.Remove(f.tmp.Name())
		}
	}
	for i := len(s.dirs) - 1; i >= 0; i-- {
		os.Remove(s.dirs[i]) // fails, as meant, on a folder not empty
	}
	s.files, s.dirs = nil, nil
}

// Named is a path given on the command line and the flag that gave it, so
// that messages say which argument to change.
type Named struct {
	Flag string
	Path string
}

// ErrIsInput reports an output that names one of the command's inputs.
type ErrIsInput struct {
	Output, Input Named
	Folder        bool
}

func (e *ErrIsInput) Error() string {
	what := "file"
	if e.Folder {
		what = "folder"
	}
	return fmt.Sprintf("%s %s is the same %s as %s %s; an output never replaces an input, even with --force",
		e.Output.Flag, e.Output.Path, what, e.Input.Flag, e.Input.Path)
}

// CheckNotInput fails with *ErrIsInput when an output is the same file or
// folder as an input. It compares with os.SameFile, so another spelling of
// the path, a symbolic or hard link, or a case-insensitive file system does
// not hide the clash. --force never lifts it: replacing an input loses the
// data the command was about to read.
//
// Callers list a folder output (a run, a split) as the folder itself and
// every file the command may write or remove in it, and a folder input as
// the folder and the files read from it. Paths that do not exist yet hold
// nothing to lose and are skipped, and so are devices and pipes: they are
// written in place and hold no result.
func CheckNotInput(outputs, inputs []Named) error {
	type stat struct {
		Named
		fi os.FileInfo
	}
	existing := func(ps []Named) []stat {
		var out []stat
		for _, p := range ps {
			if p.Path == "" {
				continue
			}
			if fi, err := os.Stat(p.Path); err == nil && !isStream(fi) {
				out = append(out, stat{p, fi})
			}
		}
		return out
	}
	ins := existing(inputs)
	for _, o := range existing(outputs) {
		for _, in := range ins {
			if os.SameFile(o.fi, in.fi) {
				return &ErrIsInput{Output: o.Named, Input: in.Named, Folder: o.fi.IsDir()}
			}
		}
	}
	return nil
}

// WriteOutput writes one file through an OutputSet: write fills it, and
// it is renamed into place only when write succeeds (replacing an existing
// file only with overwrite).
func WriteOutput(path string, overwrite bool, write func(io.Writer) error) error {
	set := NewOutputSet(overwrite)
	defer set.Abort() // no-op after Commit
	w, err := set.Create(path)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		return err
	}
	return set.Commit()
}
