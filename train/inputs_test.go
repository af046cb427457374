package train

import "testing"

// TestResumeChange: a resume may change only ResumableKeys; any other key
// set to a new value is the change reported, and the same value none.
func TestResumeChange(t *testing.T) {
	saved := DefaultConfig()
	for _, c := range []struct {
		key   string
		value any
		want  string // changed key; "" for none
	}{
		{"steps", 5, ""},
		{"eval_limit", 7, ""},
		{"lr", saved.LR, ""},
		{"lr", 0.5, "lr"},
		{"model.dim", 8, "model.dim"},
	} {
		ch, err := ResumeChange(saved, c.key, c.value)
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		got := ""
		if ch != nil {
			got = ch.Key
		}
		if got != c.want {
			t.Errorf("%s=%v: change of %q, want %q", c.key, c.value, got, c.want)
		}
	}
	if _, err := ResumeChange(saved, "no_such_key", 1); err == nil {
		t.Error("unknown key accepted")
	}
}
