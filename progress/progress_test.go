package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestETAFrom: the estimate to finish appears once etaFrom units are done,
// with a line printed right then even inside the interval, and not before.
func TestETAFrom(t *testing.T) {
	cases := []struct {
		name    string
		etaFrom int64
		adds    int64
		wantETA bool
	}{
		{"before", 20, 19, false},
		{"at", 20, 20, true},
		{"after", 20, 25, true},
		{"default", 0, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w bytes.Buffer
			b := New(&w, "train on cpu", 100)
			b.SetInterval(time.Hour) // only forced lines
			if c.etaFrom > 0 {
				b.SetETAFrom(c.etaFrom)
			}
			for range c.adds {
				b.Add(1)
			}
			got := w.String()
			if c.etaFrom > 0 && strings.Contains(got, "ETA") != c.wantETA {
				t.Errorf("etaFrom %d after %d: %q; want an ETA: %v", c.etaFrom, c.adds, got, c.wantETA)
			}
			if c.wantETA && c.etaFrom > 0 && !strings.Contains(got, "train on cpu: 20/100 (20%)") {
				t.Errorf("no line at the 20th unit: %q", got)
			}
		})
	}
}

// TestSub: a Sub bar's counts show as its parent's status, on the parent's
// line.
func TestSub(t *testing.T) {
	var w bytes.Buffer
	b := New(&w, "train on cpu", 10)
	b.SetInterval(0)
	b.Add(10)
	s := b.Sub("dev evaluation", 50)
	s.Add(25)
	s.Finish()
	last := strings.TrimSpace(w.String())
	last = last[strings.LastIndex(last, "\n")+1:]
	if !strings.HasPrefix(last, "train on cpu: 10/10 (100%)") || !strings.Contains(last, "dev evaluation 25/50 ETA") {
		t.Errorf("last line %q", last)
	}
}

// TestReporter: To writes notes as lines and bars on its writer; Discard
// and a nil writer write nothing; Capture keeps notes.
func TestReporter(t *testing.T) {
	var buf bytes.Buffer
	r := To(&buf)
	r.Notef("warning: %d examples truncated", 3)
	b := r.Bar("train", 2)
	b.Add(2)
	b.Finish()
	if out := buf.String(); !strings.HasPrefix(out, "warning: 3 examples truncated\n") || !strings.Contains(out, "train") {
		t.Errorf("To wrote %q", out)
	}
	for _, q := range []Reporter{Discard, To(nil), Or(nil)} { // must not panic
		q.Notef("x")
		q.Bar("y", 1).Finish()
	}
	var c Capture
	c.Notef("a %s", "b")
	c.Bar("z", 1).Finish()
	if n := c.Notes(); len(n) != 1 || n[0] != "a b" {
		t.Errorf("Capture kept %q", n)
	}
}
