package scan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"compbench/data"
)

// The original SCAN text format (Lake & Baroni 2018) has one example a line:
//
//	IN: jump opposite left and walk thrice OUT: I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK
const (
	textIn  = "IN: "
	textOut = " OUT: "
)

// textActions maps the original action tokens to the paper's names.
var textActions = map[string]string{
	"I_WALK": "WALK", "I_LOOK": "LOOK", "I_RUN": "RUN", "I_JUMP": "JUMP",
	"I_TURN_LEFT": "LTURN", "I_TURN_RIGHT": "RTURN",
}

// actionTexts is the inverse of textActions.
var actionTexts = map[string]string{
	"WALK": "I_WALK", "LOOK": "I_LOOK", "RUN": "I_RUN", "JUMP": "I_JUMP",
	"LTURN": "I_TURN_LEFT", "RTURN": "I_TURN_RIGHT",
}

// ParseLine splits one line of the SCAN text format into the command and its
// output in the paper's action names (I_TURN_LEFT becomes LTURN, ...).
func ParseLine(line string) (input, output string, err error) {
	rest, ok := strings.CutPrefix(line, textIn)
	if !ok {
		return "", "", fmt.Errorf("want a line starting with %q", textIn)
	}
	input, outText, ok := strings.Cut(rest, textOut)
	if !ok {
		return "", "", fmt.Errorf("no %q in the line", strings.TrimSpace(textOut))
	}
	if strings.TrimSpace(input) == "" {
		return "", "", fmt.Errorf("empty IN command")
	}
	toks := strings.Split(outText, " ")
	for i, t := range toks {
		a, ok := textActions[t]
		if !ok {
			return "", "", fmt.Errorf("OUT token %d %q: want one of I_WALK I_LOOK I_RUN I_JUMP I_TURN_LEFT I_TURN_RIGHT, separated by single spaces", i+1, t)
		}
		toks[i] = a
	}
	return input, strings.Join(toks, " "), nil
}

// FormatLine writes an input and output (paper action names) as one line of
// the SCAN text format, without the newline.
func FormatLine(input, output string) (string, error) {
	if strings.ContainsAny(input, "\r\n") || strings.Contains(input, textOut) {
		return "", fmt.Errorf("input %q cannot be written as a SCAN IN command", input)
	}
	if strings.TrimSpace(input) == "" {
		return "", fmt.Errorf("empty input")
	}
	var b strings.Builder
	b.WriteString(textIn)
	b.WriteString(input)
	b.WriteString(textOut)
	for i, a := range strings.Split(output, " ") {
		t, ok := actionTexts[a]
		if !ok {
			return "", fmt.Errorf("output token %d %q: want one of WALK LOOK RUN JUMP LTURN RTURN, separated by single spaces", i+1, a)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// LineRecord turns one line into a record with id "scan-<line number>": the
// command is parsed, and its translation must equal the line's OUT sequence,
// so a corrupt file is caught on import.
func LineRecord(lineNo int, line string) (data.Record, error) {
	in, out, err := ParseLine(line)
	if err != nil {
		return data.Record{}, err
	}
	cmd, err := Parse(in)
	if err != nil {
		return data.Record{}, fmt.Errorf("IN: %w", err)
	}
	rec := cmd.Record()
	if rec.Output != out {
		return data.Record{}, fmt.Errorf("OUT %q is not the translation of the command, %q", out, rec.Output)
	}
	// Keep the command exactly as written (spacing) so export gives the
	// same bytes back.
	rec.Input = in
	rec.ID = fmt.Sprintf("scan-%d", lineNo)
	return rec, nil
}

// ReadText reads the SCAN text format from r and calls fn with each example's
// record, in file order. Blank lines are skipped and a trailing "\r" is
// dropped; every other line must be a valid example. Errors name the line.
func ReadText(r io.Reader, fn func(rec *data.Record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	n, recs := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		rec, err := LineRecord(n, line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
		recs++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than 1 MiB", n+1)
		}
		return err
	}
	if recs == 0 {
		return fmt.Errorf("no examples (empty input)")
	}
	return nil
}

// WriteText writes records in the SCAN text format, one line each.
func WriteText(w io.Writer, recs []data.Record) error {
	bw := bufio.NewWriter(w)
	for i := range recs {
		line, err := FormatLine(recs[i].Input, recs[i].Output)
		if err != nil {
			return fmt.Errorf("record %d (id %q): %w", i+1, recs[i].ID, err)
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
