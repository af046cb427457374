package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// subcommands lists the first positional word of the commands that take
// one (a method or a subcommand), for completion. TestCompletion checks
// that each is accepted.
var subcommands = map[string][]string{
	"gen":        {"scan", "robustfill", "scfg", "scan-original"},
	"split":      {"random", "length", "template", "mcd", "tmcd", "likelihood", "grammar", "nls"},
	"cfq":        {"import", "export-split"},
	"completion": {"bash", "zsh"},
}

func runCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "completion bash|zsh", `Print a shell completion script for compbench's commands, subcommands and
flags. Load it into the current shell with

    source <(compbench completion bash)     # bash
    source <(compbench completion zsh)      # zsh

or save it where the shell looks for completions (bash-completion:
~/.local/share/bash-completion/completions/compbench). The script asks the
binary for its commands ("compbench help") and flags ("compbench CMD
--help") as you type, so it never goes stale.`, stderr)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("completion: want one shell, bash or zsh")
	}
	switch pos[0] {
	case "bash":
		_, err = io.WriteString(stdout, bashCompletion())
	case "zsh":
		// zsh runs bash completion functions through bashcompinit.
		_, err = io.WriteString(stdout, "autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	default:
		return usagef("completion: unknown shell %q (want bash or zsh)", pos[0])
	}
	return err
}

// bashCompletion is the bash script. Commands come from "compbench help"
// and flags from the command's --help (its "  --name" lines), run by the
// binary being completed, COMP_WORDS[0].
func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# compbench completion for bash (compbench completion bash)
_compbench() {
  local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub="" words
  if [ "$COMP_CWORD" -eq 1 ]; then
    words=$("$bin" help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
    COMPREPLY=($(compgen -W "$words help" -- "$cur")); return
  fi
  case "$cmd" in
`)
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "    %s)\n", n)
		fmt.Fprintf(&b, "      if [ \"$COMP_CWORD\" -eq 2 ]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(subcommands[n], " "))
		b.WriteString("      sub=${COMP_WORDS[2]} ;;\n")
	}
	b.WriteString(`  esac
  case "$cur" in
    -*)
      words=$("$bin" "$cmd" $sub --help 2>/dev/null | sed -n 's/^  --\([A-Za-z0-9][A-Za-z0-9-]*\).*/--\1/p')
      COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -o filenames -F _compbench compbench
`)
	return b.String()
}
