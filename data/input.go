package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"
)

// Limit bounds a file that is read whole into memory. Kind names the file
// in the error a larger one gets.
type Limit struct {
	Kind string
	Max  int64
}

// The bounds of every file compbench reads whole, in one place. Record
// files are streamed (one line at most 64 MiB) and weights are read by
// their own header-checked reader, so neither is here. Each bound is a
// generous multiple of the largest real file of its kind, so that only a
// wrong file (a device, a dump, a symbolic link to /dev/zero) meets it.
var (
	// ConfigFile: a training config (--config), a sweep file, a run's
	// config.json and state.json, a Hugging Face config.json, a cell's
	// result.json, an evaluation summary: objects of a few kB.
	ConfigFile = Limit{"config", 4 << 20}
	// VocabFile: a run's vocab.json; a GPT-2 or BART vocab.json,
	// encoder.json, merges.txt or vocab.bpe; a tokenizer.json. GPT-2's
	// are 1 MB, the largest multilingual tokenizer.json about 17 MB.
	VocabFile = Limit{"vocabulary", 64 << 20}
	// SplitFile: split.json and published CFQ/SCAN split files, which list
	// the ids or indexes of a whole pool (CFQ's 240k examples: 5 MB; ten
	// million ids of 20 bytes: 200 MB).
	SplitFile = Limit{"split", 512 << 20}
	// ScoreFile: compbench score's {"id","score",...} lines, one per
	// record of a pool, as large as a split file.
	ScoreFile = Limit{"score", 512 << 20}
	// MetricsFile: a run's metrics.jsonl, a line of ~150 bytes per logged
	// step and evaluation.
	MetricsFile = Limit{"metrics", 256 << 20}
)

// ErrTooLarge reports a file over its Limit. ReadFileLimit returns it
// inside an *fs.PathError, as it does every other failure to read, so
// callers that sort "cannot be read" from "wrong" errors need no case for
// it.
type ErrTooLarge struct {
	Limit Limit
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("larger than %s, the most a %s file may be", fmtSize(e.Limit.Max), e.Limit.Kind)
}

// errNotFile is ReadFileLimit's error for a device or socket.
var errNotFile = errors.New("not a regular file or a pipe")

// readError is an *fs.PathError that prints as "PATH: ERR".
type readError struct{ fs.PathError }

func (e *readError) Error() string { return e.Path + ": " + e.Err.Error() }

// As makes errors.As find the *fs.PathError.
func (e *readError) As(target any) bool {
	if p, ok := target.(**fs.PathError); ok {
		*p = &e.PathError
		return true
	}
	return false
}

func (e *readError) Unwrap() error { return e.Err }

func refuse(path string, err error) error {
	return &readError{fs.PathError{Op: "read", Path: path, Err: err}}
}

func fmtSize(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFileLimit reads path whole, refusing more than l.Max bytes. A
// regular file's size is checked before reading; the read itself stops at
// l.Max+1 bytes, so a file whose size the stat does not tell (a pipe, a
// /proc file) or that grows meanwhile is caught too. Folders and devices
// are refused: /dev/zero would never end. A FIFO is read as a pipe (Open).
func ReadFileLimit(path string, l Limit) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch m := st.Mode(); {
	case m.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case m.IsRegular():
		if st.Size() > l.Max {
			return nil, refuse(path, &ErrTooLarge{l})
		}
	case m&fs.ModeNamedPipe == 0:
		return nil, refuse(path, errNotFile)
	}
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	if st.Mode().IsRegular() {
		b.Grow(int(st.Size()) + 1)
	}
	if _, err := b.ReadFrom(io.LimitReader(f, l.Max+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(b.Len()) > l.Max {
		return nil, refuse(path, &ErrTooLarge{l})
	}
	return b.Bytes(), nil
}

// CheckFileLimit refuses what ReadFileLimit would, and a pipe too, without
// reading: for a file a library then reads by name (a tokenizer.json), which
// must be a regular file, since the library reads it in full and cannot be
// stopped.
func CheckFileLimit(path string, l Limit) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case st.IsDir():
		return &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !st.Mode().IsRegular():
		return refuse(path, errors.New("not a regular file"))
	case st.Size() > l.Max:
		return refuse(path, &ErrTooLarge{l})
	}
	return nil
}

// interrupt is the channel SetInterrupt gave (nil: none).
var interrupt atomic.Pointer[<-chan struct{}]

// SetInterrupt makes Open stop waiting for a FIFO's writer once done is
// closed; nil turns that off. compbench's main passes the Done channel of
// its signal context before a command runs: the readers take no context,
// and the open of a FIFO is the one wait in them that may never end.
func SetInterrupt(done <-chan struct{}) {
	if done == nil {
		interrupt.Store(nil)
		return
	}
	interrupt.Store(&done)
}

// ErrInterrupted is Open's error, inside an *fs.PathError as os.Open's
// are, when SetInterrupt's channel closed while it waited for a FIFO's
// writer.
var ErrInterrupted = errors.New("stopped while waiting for a writer to open the FIFO")

// Open opens an input file for reading, as os.Open does, except that the
// wait for a FIFO's writer can be interrupted. open(2) of a FIFO blocks in
// the kernel until a writer opens the other end, and no signal handler can
// end it; Open therefore opens a FIFO on another goroutine and gives up
// with ErrInterrupted when the SetInterrupt channel closes first. The
// abandoned open finishes when a writer comes (its file is then closed) or
// when the process exits.
func Open(path string) (*os.File, error) {
	var done <-chan struct{}
	if p := interrupt.Load(); p != nil {
		done = *p
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 || done == nil {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-done:
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrInterrupted}
	}
}

// Exists reports whether path names something that can be stat'ed (a
// file or a folder).
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
