package train

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// One process writes a run folder at a time. It holds an exclusive
// flock(2) on RUN/.lock, which names it (PID and command) for the message
// a second writer gets. The kernel drops a flock when its holder dies,
// however it dies, so a kill -9 leaves no lock behind that blocks; at most
// the unlocked file, which the next holder reuses.
const LockFile = ".lock"

// LockFDEnv passes a held lock to a command run under it: the number of
// an inherited file descriptor open on the folder's lock file (a sweep
// cell holds its folder's lock for its whole pipeline and runs train in
// it). The descriptor shares the holder's open file description, so the
// lock outlives the holder while the command runs, as a lock should.
const LockFDEnv = "COMPBENCH_RUN_LOCK_FD"

// lockWait is how long LockRun retries a held lock before refusing: a
// sweep --status probe holds it for microseconds, a writer for minutes.
const lockWait = 300 * time.Millisecond

// Holder is the process that holds a run folder's lock, as its lock file
// names it (PID 0: not written yet, or unreadable).
type Holder struct {
	PID     int
	Command string
}

func (h Holder) String() string {
	switch {
	case h.PID <= 0:
		return "another process"
	case h.Command == "":
		return fmt.Sprintf("PID %d", h.PID)
	}
	return fmt.Sprintf("PID %d (%s)", h.PID, h.Command)
}

// BusyError is LockRun's refusal: another process writes the folder.
type BusyError struct {
	Dir    string
	Holder Holder
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("run folder %s is in use by %s; wait for it or stop it", e.Dir, e.Holder)
}

// RunLock is this process's hold on a run folder.
type RunLock struct {
	dir  string
	f    *os.File
	path string
	// inherited: the lock belongs to the process that started this one,
	// which removes the file.
	inherited bool
	// created are the folders LockRun made, deepest first: removed again
	// when they are empty at Unlock, so a refused command leaves nothing.
	created []string
}

// Dir is the locked folder.
func (l *RunLock) Dir() string { return l.dir }

// File is the open lock file, to pass to a command run under the lock
// (exec.Cmd.ExtraFiles, with LockFDEnv naming its descriptor).
func (l *RunLock) File() *os.File { return l.f }

// LockRun takes dir's lock, making dir when it is missing, or returns a
// *BusyError naming the holder. A lock passed down through LockFDEnv is
// taken over instead.
func LockRun(dir string) (*RunLock, error) {
	created, err := mkdirs(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	if f := inheritedLock(path); f != nil {
		return &RunLock{dir: dir, f: f, path: path, inherited: true}, nil
	}
	l := &RunLock{dir: dir, path: path, created: created}
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			l.Unlock()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			h := readHolder(f)
			f.Close()
			if time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			l.Unlock()
			return nil, &BusyError{Dir: dir, Holder: h}
		}
		if err != nil {
			f.Close()
			l.Unlock()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder before may have removed the file between our open
		// and our flock: then the lock is on a file nobody else sees.
		if !samePath(f, path) {
			f.Close()
			continue
		}
		l.f = f
		if err := writeHolder(f); err != nil {
			l.Unlock()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return l, nil
	}
}

// Unlock releases the lock and removes the lock file (and the folders
// LockRun made, when empty). A lock taken over from the process that
// started this one stays with it.
func (l *RunLock) Unlock() {
	if l == nil {
		return
	}
	if l.f != nil {
		if !l.inherited && samePath(l.f, l.path) {
			// Removed while still held: whoever opened it before sees
			// another file at the path once it gets the lock, and
			// retries (LockRun).
			os.Remove(l.path)
		}
		l.f.Close()
		l.f = nil
	}
	for _, d := range l.created {
		if os.Remove(d) != nil {
			break
		}
	}
	l.created = nil
}

// LockHolder reports whether a process holds dir's lock, and which. It
// takes a shared lock for an instant, never creating the file; a writer
// that tries in that instant retries (lockWait).
func LockHolder(dir string) (Holder, bool) {
	f, err := os.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return Holder{}, false
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return readHolder(f), errors.Is(err, syscall.EWOULDBLOCK)
	}
	return Holder{}, false
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// inheritedLock is the descriptor LockFDEnv names when it is open on path
// and holds its lock; nil otherwise.
func inheritedLock(path string) *os.File {
	fd, err := strconv.Atoi(os.Getenv(LockFDEnv))
	if err != nil || fd < 3 {
		return nil
	}
	var a, b syscall.Stat_t
	if syscall.Fstat(fd, &a) != nil || syscall.Stat(path, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return nil
	}
	f := os.NewFile(uintptr(fd), path)
	// On the holder's own open file description this succeeds at once.
	if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return nil
	}
	return f
}

func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// lockCommand names this process in the lock file: "compbench SUBCOMMAND".
func lockCommand() string {
	c := "compbench"
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		c += " " + os.Args[1]
	}
	return c
}

func writeHolder(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), lockCommand())), 0)
	return err
}

// readHolder parses a lock file's "PID command" line.
func readHolder(f *os.File) Holder {
	b := make([]byte, 512)
	n, _ := f.ReadAt(b, 0)
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	pid, cmd, _ := strings.Cut(line, " ")
	h := Holder{Command: strings.TrimSpace(cmd)}
	if p, err := strconv.Atoi(pid); err == nil && p > 0 {
		h.PID = p
	} else {
		h.Command = ""
	}
	return h
}

// mkdirs makes dir and its missing parents, returning those it made,
// deepest first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// sameDir reports whether a and b name one existing folder.
func sameDir(a, b string) bool {
	x, err := os.Stat(a)
	if err != nil {
		return false
	}
	y, err := os.Stat(b)
	return err == nil && os.SameFile(x, y)
}
