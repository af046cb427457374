package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalCommands(t *testing.T) {
	dir := t.TempDir()
	gold := writeFile(t, dir, "gold.jsonl", `{"id":"1","input":"a","output":"and(exists(find(dog)), most(find(cat)))"}
{"id":"2","input":"b","output":"count(find(dog))"}
{"id":"3","input":"c","output":"or(exists(find(cat)), exists(find(dog)))"}
`)
	train := writeFile(t, dir, "train.jsonl", `{"id":"t1","input":"a","output":"and(exists(find(dog)), most(find(cat)))"}
{"id":"t2","input":"b","output":"count(find(dog))"}
`)
	a := writeFile(t, dir, "a.jsonl", `{"id":"1","prediction":"and(most(find(cat)), exists(find(dog)))"}
{"id":"2","prediction":"count(find(dog))"}
{"id":"3","prediction":"x"}
`)
	b := writeFile(t, dir, "b.jsonl", `{"id":"1","prediction":"and(exists(find(dog)), most(find(cat)))"}
{"id":"2","prediction":"count(find(dog))"}
{"id":"3","prediction":"y"}
`)
	c := writeFile(t, dir, "c.jsonl", `{"id":"1","prediction":"z"}
{"id":"2","prediction":"count(find(dog))"}
{"id":"3","prediction":"or(exists(find(cat)), exists(find(dog)))"}
`)
	// Grammar data: the tree field is the derivation, labelled with rules.
	derived := writeFile(t, dir, "derived.jsonl", `{"id":"1","input":"a","output":"count(find(dog))","tree":{"label":"q -> count ( ref )","children":[{"label":"ref -> find ( dog )"}]}}
`)
	unknown := writeFile(t, dir, "u.jsonl", `{"id":"9","prediction":"x"}`+"\n")
	empty := writeFile(t, dir, "e.jsonl", "")
	easy := filepath.Join(dir, "easy.jsonl")
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		{"eval", []string{"eval", "--gold", gold, "--pred", a}, 0, "0.3333", ""},
		{"eval normalized", []string{"eval", "--gold", gold, "--pred", a, "--normalize", "sorted-conjuncts"}, 0, "0.6667", ""},
		{"eval unknown ids", []string{"eval", "--gold", gold, "--pred", unknown}, 1, "", "not in the gold file"},
		{"eval empty predictions", []string{"eval", "--gold", gold, "--pred", empty}, 1, "", "empty file"},
		{"eval bad normalizer", []string{"eval", "--gold", gold, "--pred", a, "--normalize", "nope"}, 2, "", "unknown normalizer"},
		{"agree one model", []string{"agree", "--gold", gold, "--pred", a}, 2, "", "at least two --pred"},
		{"agree", []string{"agree", "--gold", gold, "--pred", a, "--pred", b, "--pred", c}, 0, "3/3", ""},
		{"easiness", []string{"easiness", "--train", train, "--test", gold, "--out", easy}, 0, "full", ""},
		{"easiness exists", []string{"easiness", "--train", train, "--test", gold, "--out", easy}, 1, "", "already exists"},
		{"easiness bad n", []string{"easiness", "--train", train, "--test", gold, "--out", easy + "2", "--n", "7"}, 2, "", "n must be"},
		{"auc", []string{"auc", "--easiness", easy, "--gold", gold, "--pred", a, "--pred", b, "--pred", c, "--plot", filepath.Join(dir, "roc.svg")}, 0, "AUC", ""},
		{"first-error", []string{"first-error", "--train", train, "--gold", gold, "--pred", a}, 0, "fraction", ""},
		{"first-error derivation trees", []string{"first-error", "--train", derived, "--gold", derived, "--pred", a, "--allow-missing"}, 2, "", "does not spell its output"},
		{"first-error trees from the output", []string{"first-error", "--train", derived, "--gold", derived, "--pred", a, "--allow-missing", "--tree", "bracketed"}, 0, "fraction", ""},
		{"select", []string{"select", "--pool", gold, "--budget", "2", "--out", filepath.Join(dir, "sel.jsonl")}, 0, "selected 2 of 3", ""},
		{"select budget", []string{"select", "--pool", gold, "--budget", "5", "--out", filepath.Join(dir, "sel2.jsonl")}, 2, "", "budget must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.wantOut) || !strings.Contains(errs, tc.wantErr) {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", code, tc.code, out, errs)
			}
		})
	}
}
