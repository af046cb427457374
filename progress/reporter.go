package progress

import (
	"fmt"
	"io"
	"sync"
)

// Reporter is how library packages report progress and notes (warnings,
// what is starting) without writing to a stream themselves: commands
// make one with To(stderr), tests with Discard or Capture.
type Reporter interface {
	// Bar starts a progress bar of total units.
	Bar(label string, total int64) *Bar
	// Notef reports one line.
	Notef(format string, args ...any)
}

// To reports on w: bars as pb/v3 on a terminal and plain periodic lines
// otherwise, notes as lines. A nil w reports nothing.
func To(w io.Writer) Reporter { return writer{w} }

// Discard reports nothing.
var Discard Reporter = writer{}

type writer struct{ w io.Writer }

func (r writer) Bar(label string, total int64) *Bar { return New(r.w, label, total) }

func (r writer) Notef(format string, args ...any) {
	if r.w != nil {
		fmt.Fprintf(r.w, format+"\n", args...)
	}
}

// Or returns r, or Discard when r is nil.
func Or(r Reporter) Reporter {
	if r == nil {
		return Discard
	}
	return r
}

// Capture is a Reporter that keeps the notes (bars print nothing), for
// tests.
type Capture struct {
	mu    sync.Mutex
	notes []string
}

// Bar implements Reporter with a silent bar.
func (c *Capture) Bar(label string, total int64) *Bar { return New(nil, label, total) }

// Notef implements Reporter.
func (c *Capture) Notef(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// Notes returns the notes so far.
func (c *Capture) Notes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.notes...)
}
