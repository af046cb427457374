package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"compbench/progress"
	"compbench/train"
)

// RunCell runs one cell to its end (all stages) or returns why not.
type RunCell func(ctx context.Context, c Cell) error

// Counts tallies a local sweep. Busy counts the cells left to another
// process that holds them (a second sweep on the same OUT, a Slurm task,
// a manual train --resume): neither done nor failed.
type Counts struct {
	Total, Done, Skipped, Running, Failed, Busy int
}

func (n Counts) String() string {
	s := fmt.Sprintf("%d/%d cells done (%d already), %d running, %d failed", n.Done, n.Total, n.Skipped, n.Running, n.Failed)
	if n.Busy > 0 {
		s += fmt.Sprintf(", %d held by other processes", n.Busy)
	}
	return s
}

// RunLocal runs the cells not yet finished, at most jobs at once, calling
// run for each; it reports a progress note to rep at every change. A
// failing cell does not stop the others; a cell another process holds
// (run returns a *train.BusyError) is skipped and counted as Busy. When
// ctx is cancelled no new cell starts and RunLocal waits for the running
// ones to stop.
func RunLocal(ctx context.Context, out string, cells []Cell, jobs int, run RunCell, rep progress.Reporter) Counts {
	rep = progress.Or(rep)
	if jobs < 1 {
		jobs = 1
	}
	n := Counts{Total: len(cells)}
	var mu sync.Mutex
	start := time.Now()
	report := func() {
		rep.Notef("sweep: %s, %s", n, time.Since(start).Round(time.Second))
	}
	var todo []Cell
	for _, c := range cells {
		if StateOf(c.Dir(out)) == Finished {
			n.Done++
			n.Skipped++
			continue
		}
		todo = append(todo, c)
	}
	// Seed-major: every task and model of the first seed before any of the
	// second, so a sweep stopped early (Ctrl-C, --time-limit) still has
	// whole tables of one seed.
	rank := map[uint64]int{}
	for _, c := range cells {
		if _, ok := rank[c.Seed]; !ok {
			rank[c.Seed] = len(rank)
		}
	}
	slices.SortStableFunc(todo, func(a, b Cell) int { return rank[a.Seed] - rank[b.Seed] })
	report()
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, c := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		n.Running++
		report()
		mu.Unlock()
		wg.Add(1)
		go func(c Cell) {
			defer wg.Done()
			err := run(ctx, c)
			mu.Lock()
			n.Running--
			var busy *train.BusyError
			switch {
			case err == nil:
				n.Done++
			case errors.As(err, &busy):
				n.Busy++
				rep.Notef("sweep: cell %s skipped: %v", c.Name, busy)
			case ctx.Err() == nil:
				// A cell stopped by the cancellation is unfinished,
				// not failed: the next run resumes it.
				n.Failed++
				rep.Notef("sweep: cell %s failed: %v", c.Name, err)
			}
			report()
			mu.Unlock()
			<-sem
		}(c)
	}
	wg.Wait()
	return n
}
