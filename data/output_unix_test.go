//go:build unix

package data

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A device or pipe destination (/dev/null, /dev/stdout) is written in
// place, with or without overwrite: renaming a temporary file onto it would
// replace the device node itself.
func TestOutputSetStreamDestination(t *testing.T) {
	for _, overwrite := range []bool{false, true} {
		name := "keep"
		if overwrite {
			name = "overwrite"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "out.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			got := make(chan string, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					got <- "open: " + err.Error()
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				got <- string(b)
			}()
			s := NewOutputSet(overwrite)
			w, err := s.Create(fifo)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, "streamed\n")
			if err := s.Commit(); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g != "streamed\n" {
				t.Fatalf("reader got %q", g)
			}
			st, err := os.Lstat(fifo)
			if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
				t.Fatalf("destination is no longer a pipe: %v, %v", st.Mode(), err)
			}
			assertNoTemps(t, dir)
		})
	}
	t.Run("folder destination", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := NewOutputSet(true).Create(dir); err == nil {
			t.Fatal("writing onto a folder succeeded")
		}
		assertNoTemps(t, dir)
	})
}
