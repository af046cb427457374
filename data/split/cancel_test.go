package split

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"compbench/data"
)

// countdown is a context whose Err turns to Canceled after n calls, so a
// test cancels a search at a known point inside it.
type countdown struct {
	context.Context
	n atomic.Int64
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestSearchesStopOnCancel: MCD, TMCD and Likelihood look at their context
// inside the search and return its error, so a signal during a long
// search stops the split instead of being noticed after it.
func TestSearchesStopOnCancel(t *testing.T) {
	pool := scanSample(400, 7)
	ix := index(t, pool)
	scores := map[string]float64{}
	for i := range pool {
		scores[pool[i].ID] = float64(i % 13)
	}
	cases := []struct {
		name  string
		after int64 // looks at the context that pass before it ends
		run   func(ctx context.Context) (Assignment, error)
	}{
		{"mcd", 2, func(ctx context.Context) (Assignment, error) {
			return MCD(ctx, ix, OutputLengths(pool), DefaultMCDConfig(), DefaultMCDSizes(), data.NewRand(1), nil)
		}},
		{"mcd polish", 4, func(ctx context.Context) (Assignment, error) {
			cfg := DefaultMCDConfig()
			cfg.Restarts, cfg.Polish = 1, 1000
			return MCD(ctx, ix, OutputLengths(pool), cfg, DefaultMCDSizes(), data.NewRand(1), nil)
		}},
		{"tmcd", 3, func(ctx context.Context) (Assignment, error) {
			return TMCD(ctx, ix, nil, TMCDConfig{}, Sizes{Test: 0.2}, data.NewRand(1), nil)
		}},
		{"likelihood", 0, func(ctx context.Context) (Assignment, error) {
			return Likelihood(ctx, pool, scores, ix, LikelihoodConfig{AtomConstraint: true}, Sizes{Test: 0.3}, data.NewRand(1))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := newCountdown(tc.after)
			a, err := tc.run(ctx)
			if !errors.Is(err, context.Canceled) || len(a.Train) > 0 {
				t.Fatalf("got %d train examples, error %v; want context.Canceled", len(a.Train), err)
			}
			if left := ctx.n.Load(); left != -1 {
				t.Errorf("the search looked %d times past the end (or not at all)", -1-left)
			}
		})
	}
}
