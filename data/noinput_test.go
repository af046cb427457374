package data

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckNotInput: an output clashes with an input when both name the
// same existing file or folder, however spelled; outputs that do not exist
// yet and devices never clash.
func TestCheckNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	os.WriteFile(in, []byte("{}\n"), 0o644)
	other := filepath.Join(dir, "other.jsonl")
	os.WriteFile(other, []byte("{}\n"), 0o644)
	third := filepath.Join(dir, "third.jsonl")
	os.WriteFile(third, []byte("{}\n"), 0o644)
	sub := filepath.Join(dir, "run")
	os.Mkdir(sub, 0o755)
	hard := filepath.Join(dir, "hard.jsonl")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		out    string
		input  string
		clash  bool
		folder bool
	}{
		{"same path", in, in, true, false},
		{"other spelling", filepath.Join(dir, ".", "run", "..", "in.jsonl"), in, true, false},
		{"hard link", hard, in, true, false},
		{"same folder", sub + "/", sub, true, true},
		{"another file", third, in, false, false},
		{"output not there yet", filepath.Join(dir, "new.jsonl"), in, false, false},
		{"input not there", in, filepath.Join(dir, "missing.jsonl"), false, false},
		{"file in the input folder", filepath.Join(sub, "preds.jsonl"), sub, false, false},
		{"device both ways", os.DevNull, os.DevNull, false, false},
		{"no output", "", in, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckNotInput([]Named{{"--out", tc.out}}, []Named{{"--other", other}, {"--in", tc.input}})
			var e *ErrIsInput
			if got := errors.As(err, &e); got != tc.clash {
				t.Fatalf("error %v, want a clash: %v", err, tc.clash)
			}
			if tc.clash && (e.Folder != tc.folder || e.Input.Flag != "--in" || e.Output.Flag != "--out") {
				t.Errorf("error %+v", e)
			}
		})
	}
}
