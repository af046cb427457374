package sweep

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tailBytes bounds what tail reads: a cell's log may be long.
const tailBytes = 64 << 10

// tail is the last n lines of a file, within its last tailBytes.
func tail(path string, n int) string {
	var b []byte
	if f, err := os.Open(path); err == nil {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > tailBytes {
			f.Seek(-tailBytes, io.SeekEnd)
		}
		b, _ = io.ReadAll(io.LimitReader(f, tailBytes))
		f.Close()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// writeFile writes a file by renaming a complete temporary over it, so a
// reader (the report, a resumed sweep) never sees half of it. The
// temporary is created with mode 0666 less the umask, as os.WriteFile
// would (os.CreateTemp's 0600 would hide the results from the lab).
func writeFile(path string, b []byte) error {
	var tmp *os.File
	for tries := 0; ; tries++ {
		name := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp"+strconv.FormatUint(rand.Uint64(), 10))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			tmp = f
			break
		}
		if !errors.Is(err, fs.ErrExist) || tries == 100 {
			return err
		}
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
