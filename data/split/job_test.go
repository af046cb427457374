package split

import (
	"context"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
	"compbench/progress"
)

// TestJob: a Job draws the method's split from the seed's stream, records
// its settings in Params, and refuses what it cannot run.
func TestJob(t *testing.T) {
	pool := scanSample(400, 3)
	base := Job{Pool: pool, PoolName: "pool.jsonl", Seed: 2, Sizes: Sizes{Dev: 0.1, Test: 0.2}, Tree: "scan",
		Compounds: structure.CompoundConfig{MaxSize: 2}, Anonymizer: "generic"}
	for _, c := range []struct {
		method string
		want   func(seed uint64) (Assignment, error)
	}{
		{"random", func(s uint64) (Assignment, error) {
			return Random(len(pool), base.Sizes, data.SubRand(s, "split/random"))
		}},
		{"length", func(s uint64) (Assignment, error) {
			return Length(pool, LengthConfig{By: "output"}, base.Sizes, data.SubRand(s, "split/length"))
		}},
	} {
		t.Run(c.method, func(t *testing.T) {
			j := base
			j.Method, j.Length = c.method, LengthConfig{By: "output"}
			res, got, err := j.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.want(j.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(pool) || len(res.Train) != len(want.Train) || len(res.Test) != len(want.Test) || len(res.Dev) != len(want.Dev) {
				t.Fatalf("split sizes %d/%d/%d of %d, want %d/%d/%d", len(res.Train), len(res.Dev), len(res.Test), len(got), len(want.Train), len(want.Dev), len(want.Test))
			}
			for k, i := range want.Test {
				if res.Test[k] != pool[i].ID {
					t.Fatalf("test[%d] = %s, want %s", k, res.Test[k], pool[i].ID)
				}
			}
			p, ok := res.Params.(Params)
			if !ok || p.Seed != 2 || p.Pool != "pool.jsonl" || p.MaxSize != 2 {
				t.Errorf("params %+v", res.Params)
			}
		})
	}
	t.Run("mcd needs trees", func(t *testing.T) {
		j := base
		j.Method, j.Tree, j.MCD = "mcd", TreeNone, DefaultMCDConfig()
		if _, _, err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "needs program trees") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("unknown method", func(t *testing.T) {
		j := base
		j.Method = "alphabetical"
		if _, _, err := j.Run(context.Background()); err == nil || !strings.Contains(err.Error(), `unknown split method "alphabetical"`) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("skip bad", func(t *testing.T) {
		var c progress.Capture
		j := base
		j.Method, j.SkipBad, j.Progress = "random", true, &c
		j.Pool = append([]data.Record{{ID: "bad", Input: "jump jump", Output: "JUMP JUMP"}}, pool...)
		res, got, err := j.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(pool) || res.Params.(Params).SkippedBad != 1 {
			t.Errorf("kept %d of %d, params %+v", len(got), len(pool)+1, res.Params)
		}
		if n := c.Notes(); len(n) != 1 || !strings.Contains(n[0], `skipped 1 records whose program does not parse (first: "bad")`) {
			t.Errorf("notes %q", n)
		}
	})
}
