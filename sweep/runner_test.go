package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"compbench/train"
)

// fakeCompbench stands in for the binary the stages run: train writes a
// finished run's state (or fails when FAKE_FAIL is set), predict one
// prediction, eval a summary; every command line goes to the cell's log.
const fakeCompbench = `#!/bin/bash
cmd=$1; shift
out=""
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
case $cmd in
train)
  [ -n "$FAKE_FAIL" ] && { echo "fake train: boom" >&2; exit 1; }
  echo '{"step":3,"best_step":3,"best_em":0.25}' > "$out/state.json"
  echo '{"step":3,"loss":0.5}' > "$out/metrics.jsonl";;
predict) echo '{"id":"1","prediction":"b"}' > "$out";;
eval) echo '{"n":1,"correct":1,"accuracy":1}';;
esac
`

// TestRunner runs one cell through a fake compbench: the stages get the
// sweep's preset and device, a finished cell has result.json, a failed one
// error.txt with the stage's error and the log's tail, and a cell whose
// folder another holder locks is left alone with a *train.BusyError.
func TestRunner(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	self := filepath.Join(dir, "compbench")
	if err := os.WriteFile(self, []byte(fakeCompbench), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "d.jsonl")
	if err := os.WriteFile(data, []byte(`{"id":"1","input":"a","output":"b"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err := Load(writeSpec(t, dir, fmt.Sprintf(`{"models":["transformer"],"seeds":[1],"preset":"cpu-small","device":"cpu",
		"datasets":[{"name":"d","train":%q,"test":%q}],"config":{"steps":3}}`, data, data)))
	if err != nil {
		t.Fatal(err)
	}
	cell := spec.Cells()[0]
	for _, c := range []struct {
		name, fail string
		held       bool
		state      State
		file, want string
	}{
		{"failed", "1", false, Failed, ErrorFile, "compbench train: exit status 1"},
		{"failed log tail", "1", false, Failed, ErrorFile, "fake train: boom"},
		{"held", "", true, Failed, ErrorFile, "fake train: boom"},
		{"finished", "", false, Finished, ResultFile, `"test_em": 1`},
		{"preset", "", false, Finished, LogFile, "--model transformer --preset cpu-small --config"},
		{"device", "", false, Finished, LogFile, "--seed 1 --force --device cpu\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_FAIL", c.fail)
			out := filepath.Join(dir, "out")
			if c.held {
				lock, err := train.LockRun(cell.Dir(out))
				if err != nil {
					t.Fatal(err)
				}
				defer lock.Unlock()
			}
			r := &Runner{Spec: spec, Out: out, Self: self}
			err := r.Run(context.Background(), cell)
			var busy *train.BusyError
			if c.held != errors.As(err, &busy) || (c.state == Finished) != (err == nil) {
				t.Errorf("Run: %v", err)
			}
			if st := StateOf(cell.Dir(out)); st != c.state {
				t.Errorf("state %s, want %s", st, c.state)
			}
			b, _ := os.ReadFile(filepath.Join(cell.Dir(out), c.file))
			if !strings.Contains(string(b), c.want) {
				t.Errorf("%s lacks %q:\n%s", c.file, c.want, b)
			}
		})
	}
}
