package scan

import (
	"bufio"
	"context"
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

// TextFormat is the SCAN text format's name among the record readers'
// formats (data.Formats); files ending in .txt are read in it.
const TextFormat = "scan-text"

// init registers the SCAN text format with the record readers: data cannot
// import this package (it imports data), so every command reads .txt files
// through data.ReadRecords once this package is linked in.
func init() {
	data.RegisterLineFormat(TextFormat, ".txt", lineRecord)
}

// LineRecord turns one line into a record with id "scan-<line number>"; see
// lineRecord.
func LineRecord(lineNo int, line string) (data.Record, error) {
	rec, err := lineRecord(line)
	if err != nil {
		return data.Record{}, err
	}
	rec.ID = fmt.Sprintf("scan-%d", lineNo)
	return rec, nil
}

// lineRecord turns one line into a record without an id: the command is
// parsed, and its translation must equal the line's OUT sequence, so a
// corrupt file is caught on import.
func lineRecord(line string) (data.Record, error) {
	in, out, err := ParseLine(line)
	if err != nil {
		return data.Record{}, err
	}
	cmd, err := Parse(in)
	if err != nil {
		return data.Record{}, fmt.Errorf("IN: %w", err)
	}
	rec := cmd.TextRecord()
	if rec.Output != out {
		return data.Record{}, fmt.Errorf("OUT %q is not the translation of the command, %q", out, rec.Output)
	}
	// Keep the command exactly as written (spacing) so export gives the
	// same bytes back.
	rec.Input = in
	return rec, nil
}

// ReadText reads the SCAN text format from r and calls fn with each example's
// record, in file order, with ids scan-<line number>. Blank lines are
// skipped and a trailing "\r" is dropped; every other line must be a valid
// example. Errors name the line. A file read by name (data.ReadRecords)
// gets ids named after the file instead (tasks.txt: tasks-N).
func ReadText(r io.Reader, fn func(rec *data.Record) error) error {
	n := 0
	err := data.Decode(r, TextFormat, "scan", func(rec *data.Record) error {
		n++
		return fn(rec)
	})
	if err == nil && n == 0 {
		return fmt.Errorf("no examples (empty input)")
	}
	return err
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

// Convert writes the records of in, read as format, to out through set:
// as JSONL records (to data.FormatJSONL, streamed, stopping when ctx is
// cancelled) or as SCAN's text format. It returns the records written.
func Convert(ctx context.Context, in, format, out, to string, set *data.OutputSet) (int, error) {
	if to != data.FormatJSONL {
		recs, err := data.ReadFormat(in, format)
		if err != nil {
			return 0, err
		}
		w, err := set.Create(out)
		if err != nil {
			return 0, err
		}
		if err := WriteText(w, recs); err != nil {
			return 0, fmt.Errorf("%s: %w", in, err)
		}
		return len(recs), nil
	}
	w, err := set.Create(out)
	if err != nil {
		return 0, err
	}
	enc := data.NewEncoder(w)
	n := 0
	err = data.EachRecord(in, format, func(rec *data.Record) error {
		n++
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := enc.Encode(rec); err != nil {
			return fmt.Errorf("%s: %w", out, err)
		}
		return nil
	})
	return n, err
}
