package sweep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"compbench/progress"
	"compbench/train"
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

// TestRunLocalBusy: a cell whose run returns a *train.BusyError (another
// process holds it) is counted as held, not failed, and named in a note.
func TestRunLocalBusy(t *testing.T) {
	cells := []Cell{{Name: "a", Seed: 1}, {Name: "b", Seed: 1}, {Name: "c", Seed: 1}}
	var c progress.Capture
	n := RunLocal(context.Background(), t.TempDir(), cells, 2, func(_ context.Context, c Cell) error {
		switch c.Name {
		case "a":
			return fmt.Errorf("cell a: %w", &train.BusyError{Dir: "out/cells/a", Holder: train.Holder{PID: 42, Command: "compbench sweep"}})
		case "b":
			return errors.New("out of memory")
		}
		return nil
	}, &c)
	if n.Done != 1 || n.Failed != 1 || n.Busy != 1 {
		t.Errorf("counts %+v; want 1 done, 1 failed, 1 held", n)
	}
	notes := strings.Join(c.Notes(), "\n")
	for _, want := range []string{"cell a skipped: run folder out/cells/a is in use by PID 42 (compbench sweep)", "1 failed, 1 held by other processes"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
