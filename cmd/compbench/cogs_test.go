package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"compbench/data"
	"compbench/eval"
)

// cogsExcerpt is a few dozen lines of COGS's published data/ folder (see its
// README.md): train.tsv, dev.tsv, test.tsv and gen.tsv, three columns each.
var cogsExcerpt = filepath.Join("..", "..", "data", "testdata", "cogs")

// TestConvertCOGS: convert reads COGS's three-column TSV by its extension
// and writes JSONL records with the case as "category" and ids named after
// each file, so the converted files of one dataset share no id.
func TestConvertCOGS(t *testing.T) {
	dir := t.TempDir()
	ids := map[string]string{}
	for _, stem := range []string{"train", "dev", "test", "gen"} {
		t.Run(stem, func(t *testing.T) {
			in := filepath.Join(cogsExcerpt, stem+".tsv")
			out := filepath.Join(dir, stem+".jsonl")
			stdout, errs, code := runCLI(t, "convert", "--in", in, "--out", out)
			if code != 0 || !strings.Contains(stdout, "records to "+out+" (jsonl)") {
				t.Fatalf("exit %d: %s %s", code, stdout, errs)
			}
			got, err := data.ReadRecords(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := data.ReadRecords(in)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("converted records differ from the TSV's")
			}
			for i, r := range got {
				if r.ID != fmt.Sprintf("%s-%d", stem, i+1) || r.Category == "" {
					t.Errorf("record %d: id %q, category %q", i+1, r.ID, r.Category)
				}
				if prev, ok := ids[r.ID]; ok {
					t.Errorf("id %q in %s and %s", r.ID, prev, stem)
				}
				ids[r.ID] = stem
			}
		})
	}
	b, err := os.ReadFile(filepath.Join(dir, "gen.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"gen-9","input":"The boy needed to crawl .","output":"* boy ( x _ 1 ) ; need . agent ( x _ 2 , x _ 1 ) AND need . xcomp ( x _ 2 , x _ 4 ) AND crawl . agent ( x _ 4 , x _ 1 )","category":"prim_to_inf_arg"}`
	if line := strings.Split(string(b), "\n")[8]; line != want {
		t.Errorf("gen.jsonl line 9:\n got %s\nwant %s", line, want)
	}
}

// cogsPredictions writes predictions for the gold records: the gold output
// for the ids in right, "wrong" for the others.
func cogsPredictions(t *testing.T, path string, gold []data.Record, right map[string]bool) {
	t.Helper()
	var b strings.Builder
	for _, r := range gold {
		p := "wrong"
		if right[r.ID] {
			p = r.Output
		}
		line, _ := json.Marshal(map[string]string{"id": r.ID, "prediction": p})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalByCategory scores hand-made predictions on the excerpt's gen.tsv
// (20 records, two of each of 10 cases): right are both active_to_passive
// (gen-13, gen-18), one passive_to_active (gen-4) and one cp_recursion
// (gen-3). By hand: active_to_passive 2/2, passive_to_active 1/2,
// cp_recursion 1/2, the other 7 cases 0/2; lexical (7 + 3 lexical cases'
// records: 14) 3/14 = 0.2143, structural (obj_pp_to_subj_pp, cp_recursion,
// pp_recursion: 6) 1/6 = 0.1667; all 4/20 = 0.2.
func TestEvalByCategory(t *testing.T) {
	dir := t.TempDir()
	goldPath := filepath.Join(cogsExcerpt, "gen.tsv")
	gold, err := data.ReadRecords(goldPath)
	if err != nil {
		t.Fatal(err)
	}
	pred := filepath.Join(dir, "pred.jsonl")
	cogsPredictions(t, pred, gold, map[string]bool{"gen-13": true, "gen-18": true, "gen-4": true, "gen-3": true})

	t.Run("json", func(t *testing.T) {
		out, errs, code := runCLI(t, "eval", "--gold", goldPath, "--pred", pred, "--by", "category", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var sum eval.Summary
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatal(err)
		}
		if sum.N != 20 || sum.Correct != 4 || sum.Accuracy != 0.2 || sum.ByCategory == nil {
			t.Fatalf("summary %+v", sum)
		}
		want := map[string][2]int{"active_to_passive": {2, 2}, "passive_to_active": {2, 1}, "cp_recursion": {2, 1}}
		b := sum.ByCategory
		if len(b.Categories) != 10 {
			t.Fatalf("%d categories, want 10: %+v", len(b.Categories), b.Categories)
		}
		for i, c := range b.Categories {
			w, ok := want[c.Name]
			if !ok {
				w = [2]int{2, 0}
			}
			if c.N != w[0] || c.Correct != w[1] || c.Accuracy != float64(w[1])/float64(w[0]) {
				t.Errorf("category %s: %+v, want %d of %d", c.Name, c, w[1], w[0])
			}
			if i > 0 && b.Categories[i-1].Name >= c.Name {
				t.Errorf("categories not in name order: %s before %s", b.Categories[i-1].Name, c.Name)
			}
		}
		wantGroups := []eval.GroupScore{{Name: "lexical", N: 14, Correct: 3, Accuracy: 3.0 / 14}, {Name: "structural", N: 6, Correct: 1, Accuracy: 1.0 / 6}, {Name: "generalization", N: 20, Correct: 4, Accuracy: 4.0 / 20}}
		if fmt.Sprint(b.Groups) != fmt.Sprint(wantGroups) {
			t.Errorf("groups %+v, want %+v", b.Groups, wantGroups)
		}
	})

	t.Run("table", func(t *testing.T) {
		out, errs, code := runCLI(t, "eval", "--gold", goldPath, "--pred", pred, "--by", "category")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, row := range []string{
			`active_to_passive +2 +2 +1\.0000`, `passive_to_active +2 +1 +0\.5000`, `pp_recursion +2 +0 +0\.0000`,
			`lexical +14 +3 +0\.2143`, `structural +6 +1 +0\.1667`, `\(all\) +20 +4 +0\.2000`,
		} {
			if !regexp.MustCompile(`(?m)^` + row + ` *$`).MatchString(out) {
				t.Errorf("no row %q in\n%s", row, out)
			}
		}
	})

	noCat := writeFile(t, dir, "gold.jsonl", `{"id":"gen-1","input":"a","output":"b"}`+"\n")
	onePred := writeFile(t, dir, "one.jsonl", `{"id":"gen-1","prediction":"b"}`+"\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"unknown by", []string{"--gold", goldPath, "--pred", pred, "--by", "case"}, 2, `--by "case": want category`},
		{"no categories", []string{"--gold", noCat, "--pred", onePred, "--by", "category"}, 1, `gold record 1 (id "gen-1") has no category`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, append([]string{"eval"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errs, tc.err) || strings.Count(errs, "\n") != 1 || out != "" {
				t.Errorf("exit %d (want %d), stdout %q, stderr %q (want one line containing %q)", code, tc.code, out, errs, tc.err)
			}
		})
	}
}

// TestStatsSplitLegacyIDs: a split.json whose ids are a .txt pool's old
// scan-N ids still resolves against the pool with stats --split.
func TestStatsSplitLegacyIDs(t *testing.T) {
	dir := t.TempDir()
	in := writeSCAN(t, dir, ".txt")
	out := filepath.Join(dir, "r")
	mustRun(t, "split", "random", "--in", in, "--out", out, "--seed", "1")
	sj := filepath.Join(out, "split.json")
	b, err := os.ReadFile(sj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"pool-1"`) && !strings.Contains(string(b), `"pool-2"`) {
		t.Fatalf("split.json does not name pool.txt's ids:\n%.300s", b)
	}
	old := strings.ReplaceAll(string(b), `"pool-`, `"scan-`)
	if err := os.WriteFile(sj, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := runCLI(t, "stats", "--split", out); code != 0 || strings.Contains(errs, "warning") {
		t.Fatalf("stats --split with scan-N ids: exit %d: %s", code, errs)
	}
}
