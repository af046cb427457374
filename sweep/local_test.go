package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"

	"compbench/progress"
)

// TestRunLocalOrder: cells run seed-major (every cell of the first seed
// before any of the second), a failed cell is counted and reported while
// the others run, and a cancelled sweep starts nothing more.
func TestRunLocalOrder(t *testing.T) {
	var cells []Cell
	for _, m := range []string{"a", "b"} {
		for _, s := range []uint64{7, 3} {
			cells = append(cells, Cell{Name: m + "." + string(rune('0'+s)), Model: m, Seed: s})
		}
	}
	var ran []string
	var c progress.Capture
	n := RunLocal(context.Background(), t.TempDir(), cells, 1, func(_ context.Context, c Cell) error {
		ran = append(ran, c.Name)
		if c.Name == "b.3" {
			return errors.New("out of memory")
		}
		return nil
	}, &c)
	if got := strings.Join(ran, " "); got != "a.7 b.7 a.3 b.3" {
		t.Errorf("order %q, want seed-major a.7 b.7 a.3 b.3", got)
	}
	if n.Done != 3 || n.Failed != 1 || n.Total != 4 {
		t.Errorf("counts %+v", n)
	}
	if notes := strings.Join(c.Notes(), "\n"); !strings.Contains(notes, "cell b.3 failed: out of memory") {
		t.Errorf("notes:\n%s", notes)
	}

	ctx, cancel := context.WithCancel(context.Background())
	ran = nil
	RunLocal(ctx, t.TempDir(), cells, 1, func(_ context.Context, c Cell) error {
		ran = append(ran, c.Name)
		cancel()
		return ctx.Err()
	}, nil)
	if len(ran) != 1 {
		t.Errorf("after cancelling, ran %q", ran)
	}
}
