package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"compbench/data"
)

// OtherSpecError is Record's refusal of an OUT that records another
// sweep.
type OtherSpecError struct{ Out string }

func (e *OtherSpecError) Error() string {
	path := filepath.Join(e.Out, SpecFile)
	return fmt.Sprintf("%s holds another sweep (its %s differs from --file): give a new --out, or remove %s to reuse the finished cells", e.Out, SpecFile, path)
}

// Record writes the resolved sweep file to OUT/sweep.json, or checks that
// the one there is the same (else an *OtherSpecError): cells are matched
// by name, so reusing OUT for a different sweep would mix their results.
func (s *Spec) Record(out string) error {
	b, err := s.Marshal()
	if err != nil {
		return err
	}
	path := filepath.Join(out, SpecFile)
	old, err := data.ReadFileLimit(path, data.ConfigFile)
	switch {
	case err == nil && !bytes.Equal(old, b):
		return &OtherSpecError{Out: out}
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return writeFile(path, b)
}
