// Package progress reports the advance of long loops: a pb/v3 bar when
// stderr is a terminal, and plain periodic lines otherwise (pb/v3 writes one
// ever-growing line without newlines when it is not on a terminal, which is
// unreadable in logs).
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	pb "github.com/cheggaaa/pb/v3"
)

// Bar counts work done toward a total.
type Bar struct {
	mu      sync.Mutex
	label   string
	total   int64
	done    int64
	w       io.Writer
	bar     *pb.ProgressBar
	start   time.Time
	last    time.Time
	every   time.Duration
	extra   string
	stopped bool
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}

// New starts a bar on w. A nil w gives a bar that prints nothing.
func New(w io.Writer, label string, total int64) *Bar {
	b := &Bar{label: label, total: total, w: w, start: time.Now(), every: 2 * time.Second}
	b.last = b.start
	if w != nil && isTerminal(w) {
		b.bar = pb.New64(total)
		b.bar.SetWriter(w)
		b.bar.SetTemplateString(`{{string . "label"}} {{counters . }} {{bar . }} {{percent . }} {{etime . }} {{rtime . "ETA %s"}} {{string . "extra"}}`)
		b.bar.Set("label", label)
		b.bar.Start()
	}
	return b
}

// Add records n more units of work.
func (b *Bar) Add(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	if b.bar != nil {
		b.bar.Add64(n)
		return
	}
	if b.w == nil {
		return
	}
	if now := time.Now(); now.Sub(b.last) >= b.every {
		b.last = now
		b.printLine(now)
	}
}

// SetExtra sets a short status shown beside the counts (loss, tokens/s).
func (b *Bar) SetExtra(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.extra = s
	if b.bar != nil {
		b.bar.Set("extra", s)
	}
}

func (b *Bar) printLine(now time.Time) {
	el := now.Sub(b.start).Round(time.Second)
	pct := 0.0
	if b.total > 0 {
		pct = 100 * float64(b.done) / float64(b.total)
	}
	line := fmt.Sprintf("%s: %d/%d (%.0f%%) %s", b.label, b.done, b.total, pct, el)
	if b.done > 0 && b.total > b.done {
		eta := time.Duration(float64(now.Sub(b.start)) * float64(b.total-b.done) / float64(b.done))
		line += fmt.Sprintf(" ETA %s", eta.Round(time.Second))
	}
	if b.extra != "" {
		line += " " + b.extra
	}
	fmt.Fprintln(b.w, line)
}

// Finish stops the bar and prints a final line when not on a terminal.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	if b.bar != nil {
		b.bar.Finish()
		return
	}
	if b.w != nil && time.Since(b.start) >= b.every {
		b.printLine(time.Now())
	}
}
