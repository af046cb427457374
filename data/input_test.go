package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFileLimit: a file within its bound reads whole; one over it, a
// device (also behind a symbolic link), a folder and a missing file fail
// at once with one line naming the file, and every refusal is an
// *fs.PathError, the error callers sort as "cannot be read".
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	os.WriteFile(small, []byte(`{"a": 1}`), 0o644)
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(strings.Repeat("x", 2<<20+1)), 0o644)
	link := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	l := Limit{"test", 2 << 20}
	cases := []struct {
		name, path, want string
	}{
		{"within the bound", small, ""},
		{"over the bound", big, "big.json: larger than 2 MiB, the most a test file may be"},
		{"a device", "/dev/zero", "/dev/zero: not a regular file or a pipe"},
		{"a link to a device", link, "zero.json: not a regular file or a pipe"},
		{"a folder", dir, "is a directory"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			b, err := ReadFileLimit(tc.path, l)
			if time.Since(start) > time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			if tc.want == "" {
				if err != nil || string(b) != `{"a": 1}` {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			var pe *fs.PathError
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !errors.As(err, &pe) {
				t.Fatalf("error %v (a PathError: %v), want one line with %q", err, errors.As(err, &pe), tc.want)
			}
		})
	}
}

// TestReadFileLimitPipe: a pipe has no size to check first; the read
// itself stops one byte past the bound.
func TestReadFileLimitPipe(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{{"at the bound", 1 << 20, true}, {"one byte over", 1<<20 + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer w.Close()
				w.Write(make([]byte, tc.n))
			}()
			b, err := ReadFileLimit(fifo, Limit{"test", 1 << 20})
			if tc.ok != (err == nil) || (tc.ok && len(b) != tc.n) {
				t.Fatalf("%d bytes, error %v", len(b), err)
			}
		})
	}
}

// TestOpenFIFOInterrupted: opening a FIFO that no writer opens waits in
// the kernel; closing the SetInterrupt channel ends the wait at once, and
// without a channel a writer still ends it as os.Open's does.
func TestOpenFIFOInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	t.Cleanup(func() { SetInterrupt(nil) })
	t.Run("interrupted", func(t *testing.T) {
		done := make(chan struct{})
		SetInterrupt(done)
		time.AfterFunc(50*time.Millisecond, func() { close(done) })
		start := time.Now()
		f, err := Open(fifo)
		if !errors.Is(err, ErrInterrupted) || f != nil {
			t.Fatalf("Open = %v, %v; want ErrInterrupted", f, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("returned after %s", d)
		}
		// Release the abandoned open, so it closes its file.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	t.Run("a writer comes", func(t *testing.T) {
		SetInterrupt(make(chan struct{}))
		go func() {
			time.Sleep(20 * time.Millisecond)
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.WriteString("x\n")
				w.Close()
			}
		}()
		f, err := Open(fifo)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 4)
		if n, _ := f.Read(b); string(b[:n]) != "x\n" {
			t.Errorf("read %q", b[:n])
		}
	})
}
