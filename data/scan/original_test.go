package scan

import (
	"os"
	"testing"

	"compbench/data"
)

func TestOriginalCommands(t *testing.T) {
	all := OriginalCommands()
	// Lake & Baroni's tasks.txt holds 20,910 distinct commands.
	if len(all) != 20910 {
		t.Fatalf("%d commands, want 20910", len(all))
	}
	if n := len(OriginalParts()); n != 102 {
		t.Fatalf("%d phrases, want 102", n)
	}
	seen := map[string]bool{}
	for _, c := range all {
		text := c.Text()
		if seen[text] {
			t.Fatalf("%q enumerated twice", text)
		}
		seen[text] = true
		for _, p := range c.Parts {
			if !p.Valid() {
				t.Fatalf("%q: invalid phrase %+v", text, p)
			}
		}
	}
	// Every command of the tasks.txt sample is enumerated, with the
	// sample's translation.
	f, err := os.Open("testdata/tasks.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byText := map[string]string{}
	for _, c := range all {
		byText[c.Text()] = c.Output()
	}
	n := 0
	if err := ReadText(f, func(r *data.Record) error {
		n++
		t.Run(r.Input, func(t *testing.T) {
			out, ok := byText[r.Input]
			if !ok {
				t.Fatalf("not enumerated")
			}
			if out != r.Output {
				t.Fatalf("output %q, tasks.txt (converted) %q", out, r.Output)
			}
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no commands read from testdata/tasks.txt")
	}
}
