package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// flagHelp splits a command's help into its flags' entries: the "  -name"
// line and its indented description.
var flagHelpEntry = regexp.MustCompile(`(?m)^  -([A-Za-z0-9-]+)[^\n]*\n(?:    [^\n]*\n?)*`)

// TestHelpOneDefaultEach: every flag of every command and subcommand
// states its default once (a usage string that says "(default ...)" of a
// flag whose default is not zero got a second one from the flag package).
func TestHelpOneDefaultEach(t *testing.T) {
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
	for _, words := range targets {
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
