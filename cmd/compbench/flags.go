package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// usageError marks a mistake on the command line (exit status 2). run
// sets cmd, the command whose --help the message points to.
type usageError struct {
	msg string
	cmd string
}

func (e *usageError) Error() string { return e.msg }

// line is the whole message: what is wrong, then where the help is.
func (e *usageError) line() string {
	cmd, msg := e.cmd, e.msg
	if cmd == "" {
		return "compbench: " + msg + "; see compbench help"
	}
	// "gen scfg: ..." names a subcommand; its help is the one to read.
	if head, rest, ok := strings.Cut(msg, ": "); ok && (head == cmd || strings.HasPrefix(head, cmd+" ")) {
		cmd, msg = head, rest
	}
	return fmt.Sprintf("compbench %s: %s; see compbench %s --help", cmd, msg, cmd)
}

func usagef(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// helpRequest is parseFlags' answer to --help, -h or -help: run prints the
// flag set's usage on stdout and exits 0.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// newFlags makes a flag set whose --help text starts with usage and about.
// The flag package prints nothing itself: a bad flag becomes a one-line
// usage error, and the help goes to stdout when asked for.
func newFlags(name, usage, about string, _ io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: compbench %s\n\n%s\n\nflags:\n", usage, strings.TrimSpace(about))
		printFlags(fs)
	}
	return fs
}

// printFlags is flag.PrintDefaults with the --name spelling that the docs
// and error messages use (the flag package prints -name): the same layout,
// backquoted placeholders and "(default ...)" for non-zero defaults.
func printFlags(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch {
		case isZeroDefault(f):
		case isStringFlag(f):
			fmt.Fprintf(&b, " (default %q)", f.DefValue)
		default:
			fmt.Fprintf(&b, " (default %v)", f.DefValue)
		}
		b.WriteString("\n")
		fmt.Fprint(fs.Output(), b.String())
	})
}

// isStringFlag reports whether f holds a plain string, whose default the
// help quotes (as the flag package does for fs.String flags).
func isStringFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

// isZeroDefault reports whether f's default prints as its type's zero
// value, which the help leaves unstated (as the flag package does).
func isZeroDefault(f *flag.Flag) (zero bool) {
	typ := reflect.TypeOf(f.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	// A String method that cannot handle its zero value: state the default.
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	return f.DefValue == z.Interface().(flag.Value).String()
}

// parseFlags parses args; --help gives a *helpRequest, bad flags a usage
// error. Positional arguments may stand before, between or after the flags
// ("gen scan --task length"); they are returned in order.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs}
			}
			return nil, usagef("%s: %s", fs.Name(), flagError(err))
		}
		args = fs.Args()
		if len(args) == 0 || args[0] == "--" {
			if err := finiteFloats(fs); err != nil {
				return nil, err
			}
		}
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// finiteFloats refuses NaN and ±Inf in every number flag given: strconv
// reads them, and every comparison a command makes with NaN is false, so
// a range check such as "--alpha < 0" would let it through to the
// arithmetic.
func finiteFloats(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok && err == nil {
			if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
				err = usagef("%s: --%s %v: want a finite number", fs.Name(), f.Name, v)
			}
		}
	})
	return err
}

// flagError rewords the flag package's messages, which spell flags with one
// dash, in the --flag spelling of the help.
func flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "unknown flag --" + strings.TrimPrefix(name, "-")
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + strings.TrimPrefix(name, "-") + " needs a value"
	}
	return strings.Replace(strings.Replace(msg, " for flag -", " for flag --", 1), " for -", " for --", 1)
}

// unsetFloat is a float flag whose default depends on other settings: it
// holds -1 until set, and its help shows no "(default -1)", so the usage
// text states the real defaults once.
type unsetFloat struct{ p *float64 }

func (f unsetFloat) String() string {
	if f.p == nil || *f.p < 0 {
		return ""
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f unsetFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number, got %q", s)
	}
	*f.p = v
	return nil
}

// optionalFloat defines an unsetFloat flag; it reads -1 when not given.
func optionalFloat(fs *flag.FlagSet, name, usage string) *float64 {
	v := -1.0
	fs.Var(unsetFloat{&v}, name, usage)
	return &v
}

// renamedFlag is a flag spelling that compbench no longer accepts, with
// the spelling that replaced it (docs/cli.md lists the scheme).
type renamedFlag struct{ old, new, why string }

// checkRenamed refuses an old flag spelling with a usage error that names
// the new one, before the flag package would call it unknown (or, for a
// spelling that another command still uses, misread it).
func checkRenamed(cmd string, args []string, renamed []renamedFlag) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		for _, r := range renamed {
			if name == r.old {
				return usagef("%s: --%s is now --%s (%s)", cmd, r.old, r.new, r.why)
			}
		}
	}
	return nil
}

// countTrue counts the modes given, of flags that exclude each other.
func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// names joins the names of a list of values, for flag help.
func names[T ~string](xs []T, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, sep)
}
