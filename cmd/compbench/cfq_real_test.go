package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/data"
	"compbench/data/structure"
)

// Google's example data (ten records of CFQ's dataset.json, no rule
// trees) and an excerpt of CFQ's MCD1 text release; see the READMEs beside
// them.
const (
	cfqExample = "../../data/cfq/testdata/google-example"
	cfqMCD1    = "../../data/cfq/testdata/mcd1-text"
)

// Record 0 of the example, followed by hand through CFQ's preprocessing
// and the split file (testIdxs [9, 0]): the question and query equal line
// 54884 of the MCD1 release's train part.
func TestCFQImportGoogleExample(t *testing.T) {
	dir := t.TempDir()
	parts := filepath.Join(dir, "parts")
	stdout, err := runCFQArgs("import", "--in", filepath.Join(cfqExample, "dataset.json"),
		"--split", filepath.Join(cfqExample, "split.json"), "--out-dir", parts, "--out", filepath.Join(dir, "all.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "train 6, dev 2, test 2 (of 10 examples)") {
		t.Errorf("stdout %q", stdout)
	}
	for part, want := range map[string]string{
		"train": "cfq-1 cfq-2 cfq-3 cfq-4 cfq-5 cfq-6", "dev": "cfq-7 cfq-8", "test": "cfq-0 cfq-9",
	} {
		t.Run(part, func(t *testing.T) {
			if got := cfqIDs(t, filepath.Join(parts, part+".jsonl")); got != want {
				t.Errorf("ids %q, want %q", got, want)
			}
		})
	}
	test, err := data.ReadRecords(filepath.Join(parts, "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := test[0]
	t.Run("text", func(t *testing.T) {
		if want := "Did M1 ' s female actor edit and produce M0"; r.Input != want {
			t.Errorf("input %q, want %q", r.Input, want)
		}
		if want := "SELECT count ( * ) WHERE { ?x0 film.actor.film/ns:film.performance.character M1 . ?x0 film.editor.film M0 . ?x0 film.producer.film|ns:film.production_company.films M0 . ?x0 people.person.gender m_02zsn }"; r.Output != want {
			t.Errorf("output %q\nwant   %q", r.Output, want)
		}
	})
	t.Run("pattern fields", func(t *testing.T) {
		for k, want := range map[string]string{
			"questionPatternModEntities": "Did M1 's female actor edit and produce M0",
			"sparqlPatternModEntities":   "SELECT count(*) WHERE {\n?x0 ns:film.actor.film/ns:film.performance.character M1 .\n?x0 ns:film.editor.film M0 .\n?x0 ns:film.producer.film|ns:film.production_company.films M0 .\n?x0 ns:people.person.gender ns:m.02zsn\n}",
		} {
			var got string
			if err := json.Unmarshal(r.Extra[k], &got); err != nil || got != want {
				t.Errorf("%s: %q (%v), want %q", k, got, err, want)
			}
		}
		if len(r.Extra) != 2 {
			t.Errorf("extra fields %v, want the two pattern fields (the example has no ruleTree)", r.Extra)
		}
	})
	t.Run("tree", func(t *testing.T) {
		tr, err := structure.RecordTree(&r, structure.TreeAuto)
		if err != nil {
			t.Fatal(err)
		}
		// count(?x(and(actor(M), and(editor(M), and(producer(M), gender(m_02zsn)))))).
		x := tr.Children[0]
		and := x.Children[0]
		if tr.Label != "count" || len(tr.Children) != 1 || x.Label != "?x" || and.Label != "and" {
			t.Fatalf("tree %s", tr)
		}
		if a := and.Children[0]; a.Label != "film.actor.film/ns:film.performance.character" || a.Children[0].Label != "M" {
			t.Errorf("first relation %s", a)
		}
		last := and.Children[1].Children[1].Children[1]
		if last.String() != "people.person.gender(m_02zsn)" || tr.Size() != 13 {
			t.Errorf("last relation %s, %d nodes in %s", last, tr.Size(), tr)
		}
	})
	t.Run("stats", func(t *testing.T) {
		var out, errb bytes.Buffer
		err := runStats(context.Background(), []string{"--train", filepath.Join(parts, "train.jsonl"), "--test", filepath.Join(parts, "test.jsonl"), "--max-compound", "4"}, &out, &errb)
		if err != nil || !strings.Contains(out.String(), "compound div.") {
			t.Errorf("stats: %v\n%s", err, out.String())
		}
	})
}

func TestCFQImportTextErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o")
	broken := filepath.Join(dir, "broken")
	for _, f := range []string{"train/train_encode.txt", "train/train_decode.txt", "dev/dev_encode.txt", "dev/dev_decode.txt", "test/test_encode.txt", "test/test_decode.txt"} {
		if err := os.MkdirAll(filepath.Join(broken, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		cfqWriteFile(t, filepath.Join(broken, f), "a\nb\n")
	}
	cfqWriteFile(t, filepath.Join(broken, "test/test_decode.txt"), "a\n")
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"with --split", []string{"import", "--text", cfqMCD1, "--split", "x.json", "--out-dir", out}, true, "drop --split"},
		{"with --in and --keep", []string{"import", "--text", cfqMCD1, "--in", "x.json", "--keep", "all", "--out-dir", out}, true, "drop --in and --keep"},
		{"no outputs", []string{"import", "--text", cfqMCD1}, true, "give --out-dir and/or --out"},
		{"not a release", []string{"import", "--text", t.TempDir(), "--out-dir", out}, false, "no train/train_encode.txt"},
		{"parts out of line", []string{"import", "--text", broken, "--out-dir", out, "--out", out + ".jsonl"}, false, "test/test_encode.txt and test/test_decode.txt differ in length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCFQArgs(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var ue *usageError
			if errors.As(err, &ue) != tc.usage {
				t.Errorf("usage error = %v, want %v", !tc.usage, tc.usage)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of several lines: %q", err)
			}
			for _, p := range []string{filepath.Join(out, "train.jsonl"), out + ".jsonl"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("a failed run left %s", p)
				}
			}
		})
	}
}
