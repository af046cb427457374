package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns stdout, stderr and exit status.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code := exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestDispatch(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
		wantOut  string
	}{
		{"no command", nil, 2, "no command given", ""},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`, ""},
		{"help", []string{"help"}, 0, "", "usage: compbench COMMAND"},
		{"--help", []string{"--help"}, 0, "", "commands:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.wantCode, errs)
			}
			if !strings.Contains(errs, tc.wantErr) {
				t.Fatalf("stderr %q lacks %q", errs, tc.wantErr)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Fatalf("stdout %q lacks %q", out, tc.wantOut)
			}
		})
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			_, errs, code := runCLI(t, name, "--help")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if !strings.Contains(errs, "usage: compbench "+name) {
				t.Fatalf("help of %s lacks a usage line: %q", name, errs)
			}
		})
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	var b bytes.Buffer
	code := exitCode(usagef("bad\nflag"), &b)
	if code != 2 || strings.Count(b.String(), "\n") != 1 {
		t.Fatalf("code %d, message %q", code, b.String())
	}
}

// TestNameIsNotAShellBuiltin guards the binary's name: bash resolves a
// builtin or keyword before PATH, so a command named like one (the old
// name, compgen, is bash's completion builtin) silently runs the shell's
// instead of ours.
func TestNameIsNotAShellBuiltin(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	for _, name := range []string{"compbench"} {
		t.Run(name, func(t *testing.T) {
			out, _ := exec.Command(bash, "-c", "type -t "+name).Output()
			if kind := strings.TrimSpace(string(out)); kind == "builtin" || kind == "keyword" {
				t.Fatalf("bash resolves %s as a %s", name, kind)
			}
		})
	}
	// The check itself must be able to fail.
	if out, _ := exec.Command(bash, "-c", "type -t compgen").Output(); strings.TrimSpace(string(out)) != "builtin" {
		t.Fatalf("bash's type -t compgen = %q, want builtin", out)
	}
}
