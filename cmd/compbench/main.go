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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
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
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	fmt.Fprintf(stderr, "compbench: %s\n", msg)
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// run dispatches to one command; it never exits the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printHelp(stderr)
		return usagef("no command given")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return helpOK(c.run(ctx, []string{"--help"}, stdout, stdout))
			}
		}
		printHelp(stdout)
		return nil
	}
	c, ok := commands[name]
	if !ok {
		return usagef("unknown command %q (run 'compbench help' for the list)", name)
	}
	// --help is success wherever a command returns it from parseFlags.
	return helpOK(c.run(ctx, args[1:], stdout, stderr))
}
