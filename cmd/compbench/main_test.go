package main

import (
	"bytes"
	"context"
	"fmt"
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
		{"no command", nil, 2, "compbench: no command given; see compbench help\n", ""},
		{"unknown command", []string{"frobnicate"}, 2, `compbench: unknown command "frobnicate"; see compbench help` + "\n", ""},
		{"help for an unknown command", []string{"help", "frobnicate"}, 2, `compbench: unknown command "frobnicate"; see compbench help` + "\n", ""},
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

// TestEveryCommandHasHelp asks each command for help in every spelling:
// the help is the output (stdout, exit 0), and nothing goes to stderr.
func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				out, errs, code := runCLI(t, args...)
				if code != 0 || errs != "" {
					t.Fatalf("exit %d, stderr %q", code, errs)
				}
				if !strings.Contains(out, "usage: compbench "+name) {
					t.Fatalf("help of %s lacks a usage line: %q", name, out)
				}
			})
		}
	}
}

// TestUsageErrorIsOneLine: a usage error is one line naming the command and
// where its help is, not the error twice around the whole usage text.
func TestUsageErrorIsOneLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"train", "--bogus"}, "compbench train: unknown flag --bogus; see compbench train --help"},
		{"unknown flag of a subcommand", []string{"gen", "scfg", "--bogus"}, "compbench gen scfg: unknown flag --bogus; see compbench gen scfg --help"},
		{"missing value", []string{"predict", "--run"}, "compbench predict: flag --run needs a value; see compbench predict --help"},
		{"bad value", []string{"select", "--budget", "x"}, `compbench select: invalid value "x" for flag --budget: parse error; see compbench select --help`},
		{"message without the command", []string{"select"}, "compbench select: --pool, --out and --budget are required; see compbench select --help"},
		{"dashed command", []string{"first-error", "--bogus"}, "compbench first-error: unknown flag --bogus; see compbench first-error --help"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.args...)
			if code != 2 || out != "" || errs != tc.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errs, tc.want)
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
	b.Reset()
	code = exitCode(fmt.Errorf("run: generate: %w", usagef("gen: bad")), &b)
	if code != 2 || b.String() != "compbench: run: generate: gen: bad\n" {
		t.Fatalf("wrapped: code %d, message %q", code, b.String())
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
