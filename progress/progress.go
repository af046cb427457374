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

// Interval is the time between plain progress lines.
const Interval = 2 * time.Second

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
	etaFrom int64 // the ETA is shown once done reaches it
	extra   string
	stopped bool
	parent  *Bar // set for a Sub bar: its status shows in the parent's line
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
	b := &Bar{label: label, total: total, w: w, start: time.Now(), every: Interval, etaFrom: 1}
	b.last = b.start
	if w != nil && isTerminal(w) {
		b.bar = pb.New64(total)
		b.bar.SetWriter(w)
		// The ETA is computed here rather than by pb, so that both modes
		// show it from the same point (see SetETAFrom).
		b.bar.SetTemplateString(`{{string . "label"}} {{counters . }} {{bar . }} {{percent . }} {{etime . }} {{string . "eta"}} {{string . "extra"}}`)
		b.bar.Set("label", label)
		b.bar.Start()
	}
	return b
}

// SetInterval sets the time between plain progress lines (default
// Interval); 0 prints a line on every update.
func (b *Bar) SetInterval(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.every = d
}

// SetETAFrom shows the estimated time to finish only once n units are
// done (default 1): the first units of a training run build its graphs and
// are slower than the rest, so an earlier estimate misleads. The first
// plain line with an estimate is printed as soon as it is known.
func (b *Bar) SetETAFrom(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.etaFrom = max(n, 1)
}

// Add records n more units of work.
func (b *Bar) Add(n int64) {
	if b.parent != nil {
		b.parent.mu.Lock()
		b.done += n
		b.parent.extra = b.status()
		b.parent.update(false)
		b.parent.mu.Unlock()
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	before := b.done
	b.done += n
	b.update(before < b.etaFrom && b.done >= b.etaFrom)
}

// update shows the bar's state: on a terminal through pb, otherwise as a
// line when the interval has passed or force is set. b.mu is held.
func (b *Bar) update(force bool) {
	now := time.Now()
	if b.bar != nil {
		b.bar.SetCurrent(b.done)
		b.bar.Set("eta", b.eta(now))
		b.bar.Set("extra", b.extra)
		return
	}
	if b.w == nil {
		return
	}
	if force || now.Sub(b.last) >= b.every {
		b.last = now
		b.printLine(now)
	}
}

// eta is "ETA 1m5s" once etaFrom units are done, "" before and at the end.
func (b *Bar) eta(now time.Time) string {
	if b.done < b.etaFrom || b.done <= 0 || b.total <= b.done {
		return ""
	}
	d := time.Duration(float64(now.Sub(b.start)) * float64(b.total-b.done) / float64(b.done))
	return "ETA " + d.Round(time.Second).String()
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

// Sub starts a bar for a stage inside b's work (a dev evaluation inside
// training): its label, counts and estimate show as b's status, on b's
// line, so two bars never fight over one terminal line. Finish it before
// updating b again.
func (b *Bar) Sub(label string, total int64) *Bar {
	s := &Bar{label: label, total: total, start: time.Now(), etaFrom: 1, parent: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.extra = s.status()
	b.update(false)
	return s
}

// status is a Sub bar's part of its parent's line.
func (b *Bar) status() string {
	s := fmt.Sprintf("%s %d/%d", b.label, b.done, b.total)
	if e := b.eta(time.Now()); e != "" {
		s += " " + e
	}
	return s
}

func (b *Bar) printLine(now time.Time) {
	el := now.Sub(b.start).Round(time.Second)
	pct := 0.0
	if b.total > 0 {
		pct = 100 * float64(b.done) / float64(b.total)
	}
	line := fmt.Sprintf("%s: %d/%d (%.0f%%) %s", b.label, b.done, b.total, pct, el)
	if e := b.eta(now); e != "" {
		line += " " + e
	}
	if b.extra != "" {
		line += " " + b.extra
	}
	fmt.Fprintln(b.w, line)
}

// Finish stops the bar and prints a final line when not on a terminal.
// A Sub bar prints nothing of its own.
func (b *Bar) Finish() {
	if b.parent != nil {
		return
	}
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
