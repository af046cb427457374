package lm

import (
	"context"
	"strings"
	"testing"

	"compbench/data"
	"compbench/engine"
	"compbench/models/gpt2"
)

// TestWithDefaultLR: a learning rate of 0 becomes the default for the
// weights' origin; a set one is kept.
func TestWithDefaultLR(t *testing.T) {
	for _, c := range []struct {
		name    string
		lr      float64
		scratch bool
		want    float64
	}{
		{"pretrained default", 0, false, PretrainedLR},
		{"scratch default", 0, true, ScratchLR},
		{"set", 3e-4, true, 3e-4},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := FoldConfig{LR: c.lr}
			if got := fc.WithDefaultLR(c.scratch).LR; got != c.want {
				t.Errorf("LR %g, want %g", got, c.want)
			}
		})
	}
}

// TestJob: a Job scores every record in order with the fixture's model;
// bad jobs fail with a message naming the problem and the input.
func TestJob(t *testing.T) {
	recs := []data.Record{{ID: "a", Input: "jump twice"}, {ID: "b", Input: "walk"}}
	be := &engine.CPU{BLAS: true}
	job := Job{Dir: fixtureDir, Records: recs, In: "in.jsonl", Score: DefaultScoreConfig(), Backend: be}
	res, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scores) != 2 || res.Scores[0].ID != "a" || res.Scores[1].ID != "b" || res.Tokens < 4 || !(res.Scores[0].Score < 0) {
		t.Errorf("result %+v", res)
	}
	tiny, _ := gpt2.Size("tiny")
	for _, c := range []struct {
		name string
		job  Job
		want string
	}{
		{"scratch without folds", Job{Dir: fixtureDir, Records: recs, Score: DefaultScoreConfig(), Scratch: true, Size: tiny, Backend: be}, "needs k-fold"},
		{"blank query", Job{Dir: fixtureDir, Records: []data.Record{{ID: "x", Input: " "}}, In: "in.jsonl", Score: DefaultScoreConfig(), Backend: be}, `in.jsonl: record 1 (id "x") has no "input"`},
		{"too few records for the folds", Job{Dir: fixtureDir, Records: recs, In: "in.jsonl", Score: DefaultScoreConfig(), Folds: DefaultFoldConfig(), Backend: be}, "cannot make 3 folds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := c.job.Run(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
