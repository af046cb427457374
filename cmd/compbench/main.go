// Command compbench generates benchmark data, builds generalization splits,
// trains and evaluates seq2seq baselines, and explains which test examples are
// hard. Run "compbench help" for the list of commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"compbench/data"
)

func main() {
	// SIGTERM (timeout, kill, Slurm, Docker) and SIGHUP (a closed
	// terminal) stop a command as Ctrl-C does: cancelled cleanly, with
	// its temporaries removed and its last checkpoint intact.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// The same signals end a wait for a FIFO's writer, which blocks in
	// open(2) where no context reaches (data.Open).
	data.SetInterrupt(ctx.Done())
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err on one line and maps it to the process status:
// 0 success, 2 usage errors, 1 anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		line := ue.line()
		if err != error(ue) { // wrapped: the context around it matters more
			line = "compbench: " + err.Error()
		}
		fmt.Fprintln(stderr, oneLine(line))
		return 2
	}
	fmt.Fprintf(stderr, "compbench: %s\n", oneLine(err.Error()))
	return 1
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// run dispatches to one command; it never exits the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	name := args[0]
	if name == "--version" || name == "-version" {
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return showHelp(c.run(ctx, []string{"--help"}, stdout, stderr), stdout)
			}
			return usagef("unknown command %q", args[1])
		}
		printHelp(stdout)
		return nil
	}
	c, ok := commands[name]
	if !ok {
		return usagef("unknown command %q", name)
	}
	err := showHelp(c.run(ctx, args[1:], stdout, stderr), stdout)
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = name
	}
	return err
}

// showHelp prints a command's help on stdout when err asks for it: help
// that was asked for is the command's output, and success.
func showHelp(err error, stdout io.Writer) error {
	var h *helpRequest
	if !errors.As(err, &h) {
		return err
	}
	h.fs.SetOutput(stdout)
	h.fs.Usage()
	return nil
}
