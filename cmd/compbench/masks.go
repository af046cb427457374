package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"compbench/attention"
)

// runMasks prints a decoder self-attention mask so users can see what each
// mask lets a token attend to.
func runMasks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("masks", "masks --mask NAME --target \"WALK SEP JUMP JUMP SEP\"", `
Print the decoder self-attention mask for the decoder input "<start> TARGET":
one line per query position, 1 where it may attend to that key position and
0 where not. The start token counts as a separator. Masks: causal, sep-full,
sep-to-sep-and-last, sep-to-last (Shi et al. 2022, §4.2).`, stderr)
	mask := fs.String("mask", "causal", "mask name: causal, sep-full, sep-to-sep-and-last, sep-to-last")
	target := fs.String("target", "", "target tokens separated by spaces, separators written as the --sep token")
	sepTok := fs.String("sep", "SEP", "separator token")
	labels := fs.Bool("labels", false, "prefix each line with its query token")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("masks: unexpected argument %q", pos[0])
	}
	m, err := attention.ParseMask(*mask)
	if err != nil {
		return usagef("masks: %v", err)
	}
	if strings.TrimSpace(*sepTok) == "" {
		return usagef("masks: --sep must not be empty")
	}
	toks := append([]string{"<start>"}, strings.Fields(*target)...)
	text, err := attention.Render(m, toks, *sepTok, *labels)
	if err != nil {
		return fmt.Errorf("masks: %w", err)
	}
	_, err = io.WriteString(stdout, text)
	return err
}
