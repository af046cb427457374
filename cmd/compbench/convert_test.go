package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
)

const scanLines = `IN: jump opposite left and walk thrice OUT: I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK
IN: turn around right after look OUT: I_LOOK I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT
IN: run left twice OUT: I_TURN_LEFT I_RUN I_TURN_LEFT I_RUN
`

func writeConvertFixture(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConvertRoundTrip(t *testing.T) {
	dir := t.TempDir()
	txt := writeConvertFixture(t, filepath.Join(dir, "tasks.txt"), scanLines)
	js := filepath.Join(dir, "tasks.jsonl")
	back := filepath.Join(dir, "back.txt")
	out, errs, code := runCLI(t, "convert", "--from", "scan-text", "--in", txt, "--out", js)
	if code != 0 || !strings.Contains(out, "wrote 3 records") {
		t.Fatalf("import: exit %d: %s %s", code, out, errs)
	}
	recs, err := data.ReadRecords(js)
	if err != nil {
		t.Fatal(err)
	}
	if recs[1].ID != "tasks-2" || recs[1].Output != "LOOK RTURN RTURN RTURN RTURN" ||
		strings.Join(recs[1].Parts, "|") != "LOOK|RTURN RTURN RTURN RTURN" || recs[1].Tree == nil {
		t.Errorf("record %+v", recs[1])
	}
	if _, errs, code := runCLI(t, "convert", "--from", "jsonl", "--to", "scan-text", "--in", js, "--out", back); code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(back)
	if string(got) != scanLines {
		t.Errorf("round trip gave\n%s\nwant\n%s", got, scanLines)
	}
}

func TestConvertErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeConvertFixture(t, filepath.Join(dir, "good.txt"), scanLines)
	bad := writeConvertFixture(t, filepath.Join(dir, "bad.txt"), scanLines+"IN: jump twice OUT: I_JUMP\n")
	badCmd := writeConvertFixture(t, filepath.Join(dir, "badcmd.txt"), "IN: jump jump OUT: I_JUMP I_JUMP\n")
	badJSON := writeConvertFixture(t, filepath.Join(dir, "bad.jsonl"), `{"id":"a","input":"jump","output":"JUMP"}`+"\n"+`{"id":"b","input":"fly","output":"FLY"}`+"\n")
	existing := writeConvertFixture(t, filepath.Join(dir, "existing.jsonl"), "keep")
	tsv := writeConvertFixture(t, filepath.Join(dir, "g.tsv"), "a\tb\n")
	badTSV := writeConvertFixture(t, filepath.Join(dir, "badtsv.tsv"), "a\tb\tc\na\tb\tc\td\n")
	out := filepath.Join(dir, "out.jsonl")
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"tsv to scan-text", []string{"--from", "tsv", "--to", "scan-text", "--in", tsv, "--out", out}, 1, `record 1 (id "g-1"): output token 1 "b"`},
		{"bad tsv", []string{"--in", badTSV, "--out", out}, 1, "badtsv.tsv: line 2: 4 tab-separated fields"},
		{"unknown from", []string{"--from", "csv", "--in", good, "--out", out}, 2, `unknown --from "csv"`},
		{"unknown to", []string{"--from", "jsonl", "--to", "csv", "--in", good, "--out", out}, 2, `unknown --to "csv"`},
		{"same formats", []string{"--from", "jsonl", "--to", "jsonl", "--in", good, "--out", out}, 2, "both jsonl"},
		{"no in", []string{"--from", "scan-text", "--out", out}, 2, "--in and --out are required"},
		{"extra argument", []string{"--from", "scan-text", "--in", good, "--out", out, "more"}, 2, `unexpected argument "more"`},
		{"missing input", []string{"--from", "scan-text", "--in", filepath.Join(dir, "nope.txt"), "--out", out}, 1, "no such file"},
		{"wrong OUT", []string{"--from", "scan-text", "--in", bad, "--out", out}, 1, "bad.txt: line 4: OUT"},
		{"bad command", []string{"--from", "scan-text", "--in", badCmd, "--out", out}, 1, `line 1: IN: word 2 "jump"`},
		{"bad action", []string{"--from", "jsonl", "--in", badJSON, "--out", out}, 1, `record 2 (id "b"): output token 1 "FLY"`},
		{"not jsonl", []string{"--from", "jsonl", "--in", good, "--out", out}, 1, "line 1: not a JSON record"},
		{"exists", []string{"--from", "scan-text", "--in", good, "--out", existing}, 1, "already exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, append([]string{"convert"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errs)
			}
			if !strings.Contains(errs, tc.err) || strings.Count(errs, "\n") != 1 {
				t.Errorf("stderr %q, want one line containing %q", errs, tc.err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a failed conversion wrote %s", out)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Error("existing output changed without --force")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestConvertHelpNamesTheRenaming: import changes the action names, which a
// user comparing files with the published ones must be told.
func TestConvertHelpNamesTheRenaming(t *testing.T) {
	out, _, code := runCLI(t, "convert", "--help")
	if code != 0 || !strings.Contains(out, "I_TURN_LEFT I_TURN_RIGHT become") || !strings.Contains(out, "LTURN RTURN") {
		t.Fatalf("exit %d, help:\n%s", code, out)
	}
}
