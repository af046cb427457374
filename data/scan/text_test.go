package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name, line, in, out, err string
	}{
		{"ok", "IN: jump opposite left and walk thrice OUT: I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK",
			"jump opposite left and walk thrice", "LTURN LTURN JUMP WALK WALK WALK", ""},
		{"turn right", "IN: turn right OUT: I_TURN_RIGHT", "turn right", "RTURN", ""},
		{"look run", "IN: look and run OUT: I_LOOK I_RUN", "look and run", "LOOK RUN", ""},
		{"no IN", "jump OUT: I_JUMP", "", "", "starting with"},
		{"no OUT", "IN: jump I_JUMP", "", "", `no "OUT:"`},
		{"empty IN", "IN:  OUT: I_JUMP", "", "", "empty IN"},
		{"unknown token", "IN: jump OUT: I_FLY", "", "", `OUT token 1 "I_FLY"`},
		{"double space", "IN: jump twice OUT: I_JUMP  I_JUMP", "", "", `OUT token 2 ""`},
		{"empty OUT", "IN: jump OUT: ", "", "", `OUT token 1 ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, out, err := ParseLine(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in != tc.in || out != tc.out {
				t.Errorf("got (%q, %q), want (%q, %q)", in, out, tc.in, tc.out)
			}
			back, err := FormatLine(in, out)
			if err != nil || back != tc.line {
				t.Errorf("FormatLine = %q, %v; want %q", back, err, tc.line)
			}
		})
	}
}

func TestFormatLineErrors(t *testing.T) {
	tests := []struct{ name, in, out, err string }{
		{"unknown action", "jump", "JUMP FLY", `output token 2 "FLY"`},
		{"newline in input", "jump\nwalk", "JUMP WALK", "cannot be written"},
		{"OUT in input", "jump OUT: x", "JUMP", "cannot be written"},
		{"empty input", " ", "JUMP", "empty input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FormatLine(tc.in, tc.out)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestLineRecord(t *testing.T) {
	rec, err := LineRecord(7, "IN: walk after jump left OUT: I_TURN_LEFT I_JUMP I_WALK")
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "scan-7" || rec.Input != "walk after jump left" || rec.Output != "LTURN JUMP WALK" {
		t.Errorf("record %+v", rec)
	}
	if strings.Join(rec.Parts, "|") != "LTURN JUMP|WALK" {
		t.Errorf("parts %q", rec.Parts)
	}
	// Original SCAN carries Keysers et al.'s rule applications (rules.go).
	if want := "C := S after S([[x1 after x2]](S := V(V := U(U := walk([[walk]]))), S := V(V := D(D := U left([[u left]](U := jump([[jump]])))))))"; rec.Tree.String() != want {
		t.Errorf("tree %v, want %s", rec.Tree, want)
	}
	_, err = LineRecord(1, "IN: walk after jump left OUT: I_WALK I_TURN_LEFT I_JUMP")
	if err == nil || !strings.Contains(err.Error(), "not the translation") {
		t.Errorf("mismatched OUT: error %v", err)
	}
	_, err = LineRecord(1, "IN: walk walk OUT: I_WALK I_WALK")
	if err == nil || !strings.Contains(err.Error(), "IN: word 2") {
		t.Errorf("bad command: error %v", err)
	}
}

// testdata/tasks.txt holds lines in the original format, written for these
// tests, covering every construct of the original grammar.
func TestTextRoundTrip(t *testing.T) {
	orig, err := os.ReadFile("testdata/tasks.txt")
	if err != nil {
		t.Fatal(err)
	}
	var recs []data.Record
	err = ReadText(bytes.NewReader(orig), func(r *data.Record) error {
		recs = append(recs, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Count(orig, []byte("\n")); len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	// Through JSONL and back.
	var js bytes.Buffer
	enc := data.NewEncoder(&js)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	back, err := data.DecodeRecords(&js)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteText(&out, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), orig) {
		t.Errorf("round trip changed the file:\n%s\nwant\n%s", out.Bytes(), orig)
	}
}

func TestReadTextErrors(t *testing.T) {
	tests := []struct{ name, text, err string }{
		{"empty", "", "no examples"},
		{"only blank", "\n  \n", "no examples"},
		{"bad second line", "IN: jump OUT: I_JUMP\nIN: jump OUT: I_WALK\n", "line 2: OUT"},
		{"garbage", "IN: jump OUT: I_JUMP\n\nhello\n", "line 3: want a line starting"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ReadText(strings.NewReader(tc.text), func(*data.Record) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestReadTextCRLF(t *testing.T) {
	var got []string
	err := ReadText(strings.NewReader("IN: jump OUT: I_JUMP\r\n\r\nIN: walk left OUT: I_TURN_LEFT I_WALK\r\n"),
		func(r *data.Record) error { got = append(got, r.ID+"="+r.Output); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "scan-1=JUMP,scan-3=LTURN WALK" {
		t.Errorf("got %q", got)
	}
}

// TestReadRecordsText: with this package linked in, data.ReadRecords reads
// .txt files as SCAN text, with ids named after the file.
func TestReadRecordsText(t *testing.T) {
	for _, name := range []string{"tasks.txt", "TASKS.TXT"} {
		if got := data.FormatOf(name); got != TextFormat {
			t.Errorf("FormatOf(%q) = %q, want %q", name, got, TextFormat)
		}
	}
	recs, err := data.ReadRecords("testdata/tasks.txt")
	if err != nil {
		t.Fatal(err)
	}
	var viaText []data.Record
	f, err := os.Open("testdata/tasks.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ReadText(f, func(r *data.Record) error { viaText = append(viaText, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(viaText) || len(recs) == 0 {
		t.Fatalf("%d records, ReadText %d", len(recs), len(viaText))
	}
	for i := range recs {
		want := viaText[i]
		want.ID = "tasks-" + strings.TrimPrefix(want.ID, "scan-")
		if recs[i].ID != want.ID || recs[i].Output != want.Output || recs[i].Tree.String() != want.Tree.String() {
			t.Fatalf("record %d: %+v, want %+v", i+1, recs[i], want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("IN: jump OUT: I_JUMP\nIN: jump OUT: I_WALK\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := data.ReadRecords(bad); err == nil || !strings.Contains(err.Error(), "bad.txt: line 2: OUT") {
		t.Errorf("error %v, want the file and line", err)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"IN: jump OUT: I_JUMP",
		"IN: turn around right twice after walk OUT: I_WALK I_TURN_RIGHT I_TURN_RIGHT",
		"IN:  OUT: ", "IN: a OUT: b OUT: c", "OUT: IN:", "IN: x\r OUT: I_RUN",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		in, out, err := ParseLine(line)
		if err != nil {
			return
		}
		back, err := FormatLine(in, out)
		if err == nil && back != line {
			t.Fatalf("FormatLine(ParseLine(%q)) = %q", line, back)
		}
		_, _ = LineRecord(1, line)
	})
}
