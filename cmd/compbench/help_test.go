package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// flagHelpEntry splits a command's help into its flags' entries: the
// "  --name" line and its indented description.
var flagHelpEntry = regexp.MustCompile(`(?m)^  --([A-Za-z0-9-]+)[^\n]*\n(?:    [^\n]*\n?)*`)

// helpTargets lists every command and subcommand whose --help prints flags.
func helpTargets() [][]string {
	var targets [][]string
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		targets = append(targets, []string{n})
		for _, s := range subcommands[n] {
			targets = append(targets, []string{n, s})
		}
	}
	return targets
}

// TestHelpOneDefaultEach: every flag of every command and subcommand
// states its default once (a usage string that says "(default ...)" of a
// flag whose default is not zero got a second one from the printer).
func TestHelpOneDefaultEach(t *testing.T) {
	for _, words := range helpTargets() {
		t.Run(strings.Join(words, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, append(words, "--help")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, m := range flagHelpEntry.FindAllStringSubmatch(out, -1) {
				if n := strings.Count(m[0], "(default"); n > 1 {
					t.Errorf("--%s states %d defaults:\n%s", m[1], n, m[0])
				}
			}
		})
	}
}

// singleDash is a help line naming a flag in the flag package's -name
// spelling, which neither the docs nor the error messages use.
var singleDash = regexp.MustCompile(`(?m)^  -[A-Za-z].*$`)

// TestHelpDoubleDash: every command's help spells its flags --name, as
// the docs and the error messages do, and keeps the value placeholder.
func TestHelpDoubleDash(t *testing.T) {
	for _, words := range helpTargets() {
		t.Run(strings.Join(words, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, append(words, "--help")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if m := singleDash.FindAllString(out, -1); m != nil {
				t.Errorf("help names flags with one dash:\n%s", strings.Join(m, "\n"))
			}
		})
	}
	cases := []struct {
		name  string
		words []string
		want  []string
	}{
		{"backquoted placeholder", []string{"train"}, []string{"  --model NAME\n"}},
		{"type as placeholder", []string{"split", "random"}, []string{"  --in string\n", "  --seed uint\n"}},
		{"bool", []string{"train"}, []string{"  --force\n"}},
		{"quoted string default", []string{"train"}, []string{`(default "transformer")`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, code := runCLI(t, append(c.words, "--help")...)
			for _, w := range c.want {
				if code != 0 || !strings.Contains(out, w) {
					t.Errorf("exit %d, help lacks %q:\n%s", code, w, out)
				}
			}
		})
	}
}
