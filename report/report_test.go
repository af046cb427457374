package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/sweep"
)

func TestStatOf(t *testing.T) {
	for _, c := range []struct {
		name     string
		xs       []float64
		mean, sd float64
	}{
		{"none", nil, 0, 0},
		{"one", []float64{0.5}, 0.5, 0},
		{"sample sd", []float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0 / 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := StatOf(c.xs)
			if s.N != len(c.xs) || math.Abs(s.Mean-c.mean) > 1e-12 || math.Abs(s.SD-c.sd) > 1e-12 {
				t.Errorf("StatOf(%v) = %+v, want mean %v sd %v", c.xs, s, c.mean, c.sd)
			}
		})
	}
}

// fakeSweep writes a sweep folder whose cells hold the given test exact
// matches (per dataset, model, then seed) and a compound divergence per
// dataset; one cell is left unfinished.
func fakeSweep(t *testing.T) string {
	t.Helper()
	out := t.TempDir()
	train := filepath.Join(out, "t.jsonl")
	if err := os.WriteFile(train, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := fmt.Sprintf(`{"name":"fake","models":["transformer","lstm-copy"],"seeds":[1,2,3],
		"datasets":[{"name":"mcd1","train":%q,"test":%q},{"name":"random","train":%q,"test":%q}]}`, train, train, train, train)
	if err := os.WriteFile(filepath.Join(out, "s.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sweep.Load(filepath.Join(out, "s.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Marshal()
	if err := os.WriteFile(filepath.Join(out, sweep.SpecFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	div := map[string]float64{"mcd1": 0.6, "random": 0.01}
	for _, c := range s.Cells() {
		if c.Name == "random.lstm-copy.seed3" {
			continue // unfinished
		}
		dir := c.Dir(out)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		d := div[c.Data]
		few := 0.5
		res := sweep.Result{Cell: c, Steps: 10, DevEM: 0.9, TestEM: float64(c.Seed) / 10, FewShotEM: &few, TrainSeconds: 2, CompoundDivergence: &d}
		rb, _ := json.Marshal(res)
		metrics := `{"step":5,"loss":2.5,"lr":0.001,"grad_norm":1,"tokens_per_s":100}
{"step":5,"dev_loss":2,"dev_em":0.1}
{"step":5,"resumed":{}}
{"step":10,"loss":1.5,"lr":0.001,"grad_norm":1,"tokens_per_s":100}
{"step":10,"dev_loss":1,"dev_em":0.9}
`
		files := map[string][]byte{sweep.ResultFile: rb, "metrics.jsonl": []byte(metrics), sweep.CellFile: []byte("{}")}
		if c.Data == "mcd1" { // easiness computed: examples 1 and 3 right
			files[sweep.EasinessFile] = []byte(`{"id":"1","easiness":0.9}` + "\n" + `{"id":"2","easiness":0.2}` + "\n" + `{"id":"3","easiness":0.5}` + "\n")
			files[sweep.ExamplesFile] = []byte(`{"id":"1","correct":true}` + "\n" + `{"id":"2","correct":false}` + "\n" + `{"id":"3","correct":true}` + "\n")
			if _, _, ok, err := sweep.EasinessROC(dir); err != nil || ok {
				t.Fatalf("ROC before the files exist: %v %v", ok, err)
			}
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// result.json holds the AUC the runner computed from the same files.
	for _, c := range s.Cells() {
		if c.Data != "mcd1" {
			continue
		}
		auc, _, ok, err := sweep.EasinessROC(c.Dir(out))
		if err != nil || !ok || auc != 1 {
			t.Fatalf("EasinessROC: %v %v %v, want AUC 1", auc, ok, err)
		}
		res, err := sweep.ReadResult(c.Dir(out))
		if err != nil {
			t.Fatal(err)
		}
		res.EasinessAUC = &auc
		rb, _ := json.Marshal(res)
		if err := os.WriteFile(filepath.Join(c.Dir(out), sweep.ResultFile), rb, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestReportSweep: one row per (dataset, model) with n the finished seeds
// and mean ± sample sd; the CSV has one row per finished cell; the plots
// include the divergence plot and learning curves.
func TestReportSweep(t *testing.T) {
	r, err := Load(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| data | model | n | dev EM | test EM zero-shot | test EM few-shot | compound div. | easiness AUC | train time (s) |",
		"| mcd1 | transformer | 3 | 90.0 ± 0.0 | 20.0 ± 10.0 | 50.0 ± 0.0 | 0.600 ± 0.000 | 1.000 ± 0.000 | 2.0 ± 0.0 |",
		"| random | transformer | 3 | 90.0 ± 0.0 | 20.0 ± 10.0 | 50.0 ± 0.0 | 0.010 ± 0.000 | - | 2.0 ± 0.0 |",
		"| random | lstm-copy | 2 | 90.0 ± 0.0 | 15.0 ± 7.1 |",
		"1 cells are not finished: random.lstm-copy.seed3",
	} {
		t.Run(want[:20], func(t *testing.T) {
			if !strings.Contains(md.String(), want) {
				t.Errorf("markdown lacks %q:\n%s", want, md.String())
			}
		})
	}
	var cb bytes.Buffer
	if err := r.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil || len(rows) != 12 || rows[1][0] != "mcd1.transformer.seed1" || rows[1][8] != "0.1" {
		t.Errorf("CSV (%v):\n%v", err, rows)
	}
	figs, err := r.Figures()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range figs {
		names[f.Name] = true
	}
	for _, want := range []string{"accuracy-vs-divergence", "loss-mcd1_transformer", "dev-em-random_lstm-copy", "roc-mcd1_lstm-copy"} {
		if !names[want] {
			t.Errorf("figures %v lack %s", names, want)
		}
	}
}

// TestReportPaper: --paper puts the published numbers beside the groups
// they match (mcd* matching every MCD split) and cites them.
func TestReportPaper(t *testing.T) {
	r, err := Load(fakeSweep(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetPaper("nope"); err == nil {
		t.Error("unknown paper accepted")
	}
	if err := r.SetPaper("keysers-table4"); err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"header", "| train time (s) | paper zero-shot |\n"},
		{"mcd", "| mcd1 | transformer | 3 |"},
		{"mcd value", "| 2.0 ± 0.0 | 1.1 ± 0.5 |\n"},
		{"random value", "| 2.0 ± 0.0 | 100.0 ± 0.0 |\n"},
		{"unmatched", "| 2.0 ± 0.0 | - |\n"},
		{"source", "Paper: Keysers et al. (2020), Table 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(md.String(), c.want) {
				t.Errorf("markdown lacks %q:\n%s", c.want, md.String())
			}
		})
	}
}

// TestReportRun: a plain run folder (no sweep) reports its one row from
// state.json and metrics.jsonl.
func TestReportRun(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"config.json":   `{"model":{"variant":"relative"},"seed":4}`,
		"state.json":    `{"step":10,"best_step":10,"best_em":0.25}`,
		"metrics.jsonl": "{\"step\":10,\"loss\":1.5}\n{\"step\":10,\"dev_loss\":1,\"dev_em\":0.25}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := "| - | relative | 1 | 25.0 |"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither a sweep folder") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestReportPooled: with --paper, a published number over several splits
// (mcd*) gets a row pooling every run of the splits it covers; one split
// alone gets none.
func TestReportPooled(t *testing.T) {
	run := func(data string, seed uint64, em float64) Run {
		return Run{Result: sweep.Result{Cell: sweep.Cell{Data: data, Model: "transformer", Variant: "transformer", Seed: seed},
			DevEM: em, TestEM: em}}
	}
	cases := []struct {
		name string
		runs []Run
		want Stat // the pooled row's test EM; N 0: no pooled row
	}{
		{"three splits", []Run{run("mcd1", 1, 0.1), run("mcd1", 2, 0.3), run("mcd2", 1, 0.2), run("random", 1, 1)},
			Stat{N: 3, Mean: 0.2, SD: 0.1}},
		{"one split", []Run{run("mcd1", 1, 0.1), run("random", 1, 1)}, Stat{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Runs: tc.runs}
			r.group()
			groups := len(r.Groups)
			if err := r.SetPaper("keysers-table4"); err != nil {
				t.Fatal(err)
			}
			if tc.want.N == 0 {
				if len(r.Groups) != groups {
					t.Fatalf("%d rows after pooling, want %d", len(r.Groups), groups)
				}
				return
			}
			if len(r.Groups) != groups+1 {
				t.Fatalf("%d rows after pooling, want %d", len(r.Groups), groups+1)
			}
			g := r.Groups[groups]
			if !g.Pooled || g.Cell.Data != "mcd*" || g.TestEM.N != tc.want.N ||
				math.Abs(g.TestEM.Mean-tc.want.Mean) > 1e-12 || math.Abs(g.TestEM.SD-tc.want.SD) > 1e-12 {
				t.Errorf("pooled row %+v, want data mcd* and test EM %+v", g, tc.want)
			}
		})
	}
}

// TestPaperFamilies: a published MCD row (mcd*) matches data names with a
// family prefix (published-mcd1, ours-mcd2), and two families in one report
// are pooled apart, each over its own splits.
func TestPaperFamilies(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"mcd*", "mcd1", true}, {"mcd*", "published-mcd1", true}, {"mcd*", "ours-mcd3", true},
		{"mcd*", "random", false}, {"mcd*", "published-random", false}, {"random", "random", true}, {"random", "ours-random", false},
	} {
		t.Run(c.pattern+"~"+c.name, func(t *testing.T) {
			if got := matchData(c.pattern, c.name); got != c.want {
				t.Errorf("matchData(%q, %q) = %v", c.pattern, c.name, got)
			}
		})
	}
	run := func(data string, em float64) Run {
		return Run{Result: sweep.Result{Cell: sweep.Cell{Data: data, Model: "lstm-attention", Variant: "lstm-attention", Seed: 1}, DevEM: em, TestEM: em}}
	}
	r := &Report{Runs: []Run{run("published-mcd1", 0.02), run("ours-mcd1", 0.04), run("ours-mcd2", 0.06), run("ours-mcd3", 0.08)}}
	r.group()
	if err := r.SetPaper("keysers-table4"); err != nil {
		t.Fatal(err)
	}
	var pooled []string
	for i := range r.Groups {
		g := &r.Groups[i]
		if _, ok := r.published(g); !ok {
			t.Errorf("%s has no published number", g.Cell.Data)
		}
		if g.Pooled {
			pooled = append(pooled, fmt.Sprintf("%s n=%d %.2f", g.Cell.Data, g.TestEM.N, g.TestEM.Mean))
		}
	}
	if got := strings.Join(pooled, "; "); got != "ours-mcd* n=3 0.06" {
		t.Errorf("pooled rows %q, want one over ours-mcd1..3", got)
	}
}
