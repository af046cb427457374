package split

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

// nlsJob is an nls Job over a SCAN sample, programs from SCAN's trees.
func nlsJob() Job {
	return Job{Method: "nls", Pool: scanSample(300, 2), PoolName: "pool.jsonl", Seed: 1, Tree: "scan",
		Compounds: structure.CompoundConfig{MaxSize: 2}, NLS: DefaultNLSConfig()}
}

// TestRunNLS: a job lists its candidates, writes the one picked or each,
// and leaves the caller's refusals and a bad index to the caller.
func TestRunNLS(t *testing.T) {
	ctx := context.Background()
	var table strings.Builder
	j := nlsJob()
	listed, err := j.RunNLS(ctx, Pick{List: true}, Out{Table: &table})
	if err != nil {
		t.Fatal(err)
	}
	if listed.Candidates == 0 || !strings.HasPrefix(table.String(), "index  seed") {
		t.Fatalf("%d candidates, table %q", listed.Candidates, table.String())
	}
	refused := errors.New("not free")
	for _, tc := range []struct {
		name   string
		pick   Pick
		check  error
		splits int    // folders written under the output
		want   string // error, or "" for none
	}{
		{"index", Pick{Index: 0}, nil, 1, ""},
		{"all", Pick{All: true}, nil, listed.Candidates, ""},
		{"index out of range", Pick{Index: listed.Candidates}, nil, 0, "--index"},
		{"refused output", Pick{All: true}, refused, 0, "not free"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			j := nlsJob()
			w, err := j.RunNLS(ctx, tc.pick, Out{Dir: dir, Check: func(string) error { return tc.check }})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				var ie *IndexError
				if tc.name == "index out of range" && !errors.As(err, &ie) {
					t.Errorf("error %T, want an *IndexError", err)
				}
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("a refused job wrote %s", dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.pick.All {
				if w.Splits != tc.splits {
					t.Errorf("wrote %d splits, want %d", w.Splits, tc.splits)
				}
				dir = filepath.Join(dir, "0")
			} else if w.Result == nil || w.Result.Method != "nls" {
				t.Fatalf("result %+v", w.Result)
			}
			if _, err := data.ReadRecords(filepath.Join(dir, "test.jsonl")); err != nil {
				t.Error(err)
			}
		})
	}
}
