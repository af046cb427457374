package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCompletion sources the bash script and completes words against the
// test binary run as compbench (asCLIEnv), as a user's shell would.
func TestCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "compbench")
	wrapper := "#!/bin/sh\n" + asCLIEnv + "=1 exec '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	script, errs, code := runCLI(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("completion bash: exit %d: %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		words []string
		want  []string
	}{
		{"command", []string{"spl"}, []string{"split"}},
		{"every command", []string{""}, []string{"train", "predict", "version", "completion", "help"}},
		{"split method", []string{"split", "tm"}, []string{"tmcd"}},
		{"flag of a method", []string{"split", "mcd", "--se"}, []string{"--seed"}},
		{"flag of a command", []string{"train", "--drop"}, []string{"--dropout"}},
		{"flag of a subcommand", []string{"gen", "scfg", "--gram"}, []string{"--grammar"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			words := bin + " " + strings.Join(c.words, " ")
			if c.words[len(c.words)-1] == "" {
				words = bin + " ''"
			}
			sh := "source " + filepath.Join(dir, "c.sh") + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
				strconv.Itoa(len(c.words)) + "; _compbench; printf '%s\\n' \"${COMPREPLY[@]}\""
			out, err := exec.Command(bash, "-c", sh).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := strings.Fields(string(out))
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("completing %q: %v lacks %q", c.words, got, w)
				}
			}
		})
	}
	t.Run("zsh", func(t *testing.T) {
		out, _, code := runCLI(t, "completion", "zsh")
		if code != 0 || !strings.Contains(out, "bashcompinit") || !strings.Contains(out, "complete -o filenames -F _compbench compbench") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("bad shell", func(t *testing.T) {
		if _, errs, code := runCLI(t, "completion", "fish"); code != 2 || !strings.Contains(errs, "bash or zsh") {
			t.Fatalf("exit %d: %s", code, errs)
		}
	})
	// Every subcommand completion offers must be one the command accepts.
	for cmd, subs := range subcommands {
		for _, s := range subs {
			t.Run("accepts "+cmd+" "+s, func(t *testing.T) {
				if _, errs, code := runCLI(t, cmd, s, "--help"); code != 0 {
					t.Fatalf("%s %s --help: exit %d: %s", cmd, s, code, errs)
				}
			})
		}
	}
}
