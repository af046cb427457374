package robustfill

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The model's source string (a record's input) lists the I/O examples at the
// character level, one token per character, tokens separated by single
// spaces, so a whitespace tokenizer yields the character vocabulary the
// RobustFill models read (paper §3: the specification is the examples):
//
//	in1 -> out1 | in2 -> out2 | ...
//
// e.g. inputs ["a b", "c"], outputs ["A", ""] give "a SPACE b -> A | c ->".
// A character is its own token except: space is SPACE, the character | is
// PIPE, and any other white space or non-printable character is U+XXXX
// (hexadecimal code point). The structure tokens -> and | and the escapes
// are never one printable character, so decoding is unambiguous.

// Structure tokens of the I/O encoding.
const (
	IOArrow   = "->"
	IOSep     = "|"
	PipeToken = "PIPE"
)

// EncodeIO writes the I/O examples as the model's source string.
func EncodeIO(inputs, outputs []string) string {
	var b strings.Builder
	for i := range inputs {
		if i > 0 {
			b.WriteString(" | ")
		}
		writeChars(&b, inputs[i])
		if inputs[i] != "" {
			b.WriteByte(' ')
		}
		b.WriteString(IOArrow)
		if i < len(outputs) {
			if outputs[i] != "" {
				b.WriteByte(' ')
			}
			writeChars(&b, outputs[i])
		}
	}
	return b.String()
}

func writeChars(b *strings.Builder, s string) {
	for j, r := range s {
		if j > 0 {
			b.WriteByte(' ')
		}
		switch {
		case r == ' ':
			b.WriteString(SpaceToken)
		case r == '|':
			b.WriteString(PipeToken)
		case r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r):
			fmt.Fprintf(b, "U+%04X", r)
		default:
			b.WriteRune(r)
		}
	}
}

// DecodeIO parses a source string written by EncodeIO.
func DecodeIO(s string) (inputs, outputs []string, err error) {
	if s == "" {
		return nil, nil, fmt.Errorf("io: empty")
	}
	for k, ex := range strings.Split(s, " "+IOSep+" ") {
		toks := strings.Split(ex, " ")
		arrow := -1
		for j, t := range toks {
			if t == IOArrow {
				if arrow >= 0 {
					return nil, nil, fmt.Errorf("io: example %d: more than one %q", k+1, IOArrow)
				}
				arrow = j
			}
		}
		if arrow < 0 {
			return nil, nil, fmt.Errorf("io: example %d: no %q", k+1, IOArrow)
		}
		in, err := decodeChars(toks[:arrow])
		if err != nil {
			return nil, nil, fmt.Errorf("io: example %d: input: %w", k+1, err)
		}
		out, err := decodeChars(toks[arrow+1:])
		if err != nil {
			return nil, nil, fmt.Errorf("io: example %d: output: %w", k+1, err)
		}
		inputs, outputs = append(inputs, in), append(outputs, out)
	}
	return inputs, outputs, nil
}

func decodeChars(toks []string) (string, error) {
	var b strings.Builder
	for _, t := range toks {
		switch {
		case t == SpaceToken:
			b.WriteByte(' ')
		case t == PipeToken:
			b.WriteByte('|')
		case strings.HasPrefix(t, "U+") && len(t) > 2:
			v, err := strconv.ParseUint(t[2:], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return "", fmt.Errorf("bad escape %q", t)
			}
			b.WriteRune(rune(v))
		case utf8.RuneCountInString(t) == 1 && t != IOSep:
			b.WriteString(t)
		default:
			return "", fmt.Errorf("bad character token %q", t)
		}
	}
	return b.String(), nil
}
