package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name → body under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeRuns writes a split folder (train.jsonl, split.json) and plain run
// folders trained on it, as compbench train leaves them: two seeds with
// lr 0.001, one with lr 0.01; it returns the run folders.
func fakeRuns(t *testing.T) []string {
	t.Helper()
	root := t.TempDir()
	split := filepath.Join(root, "mcd-a")
	writeFiles(t, split, map[string]string{
		"train.jsonl": "{}\n",
		"split.json":  `{"method":"mcd","train":[],"test":[],"stats":{"train_size":80,"dev_size":10,"test_size":10,"atom_divergence":0.02,"compound_divergence":0.5,"output_pattern_coverage":0.25,"input_pattern_coverage":1,"output_length_ratio":0.75,"input_length_ratio":0.9}}`,
	})
	var runs []string
	for i, r := range []struct {
		seed int
		lr   string
		em   float64
	}{{1, "0.001", 0.2}, {2, "0.001", 0.4}, {1, "0.01", 0.1}} {
		dir := filepath.Join(root, fmt.Sprintf("run%d", i+1))
		writeFiles(t, dir, map[string]string{
			"config.json":    fmt.Sprintf(`{"model":{"variant":"transformer","dim":64},"seed":%d,"lr":%s}`, r.seed, r.lr),
			"state.json":     `{"step":10,"best_step":10,"best_em":0.5}`,
			"metrics.jsonl":  "{\"step\":10,\"loss\":1.5}\n{\"step\":10,\"dev_loss\":1,\"dev_em\":0.5}\n",
			"data.json":      fmt.Sprintf(`{"files":[{"role":"train","path":%q}]}`, filepath.Join(split, "train.jsonl")),
			"test.eval.json": fmt.Sprintf(`{"n":10,"accuracy":%v}`, r.em),
		})
		runs = append(runs, dir)
	}
	return runs
}

// TestReportRunFolders: report reads one run folder, or several; runs of
// one data and model are one row over their seeds, unless their configs
// differ (here lr), which then is a column; the data is named by the
// folder of the training file, whose split.json gives the compound
// divergence and the split statistics.
func TestReportRunFolders(t *testing.T) {
	runs := fakeRuns(t)
	for _, c := range []struct {
		name string
		dirs []string
		want []string
	}{
		{"one run", runs[:1], []string{
			"## run1\n",
			"| data | model | n | dev EM | test EM zero-shot | compound div. |",
			"| mcd-a | transformer | 1 | 50.0 | 20.0 | 0.500 |",
			"| mcd-a | mcd | 80 | 10 | 10 | 0.020 | 0.500 | 0.90 | 0.75 | 100.0% | 25.0% |",
		}},
		{"two seeds", runs[:2], []string{
			"## run1, run2\n",
			"| mcd-a | transformer | 2 | 50.0 ± 0.0 | 30.0 ± 14.1 | 0.500 ± 0.000 |",
		}},
		{"seeds and another lr", runs, []string{
			"| data | model | lr | n |",
			"| mcd-a | transformer | 0.001 | 2 | 50.0 ± 0.0 | 30.0 ± 14.1 |",
			"| mcd-a | transformer | 0.01 | 1 | 50.0 | 10.0 |",
		}},
		{"a sweep and a run", []string{fakeSweep(t), runs[0]}, []string{
			"## fake, run1\n",
			"| mcd1 | transformer | 3 |",
			"| mcd-a | transformer | 1 |",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Load(c.dirs...)
			if err != nil {
				t.Fatal(err)
			}
			var md bytes.Buffer
			if err := r.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(md.String(), want) {
					t.Errorf("markdown lacks %q:\n%s", want, md.String())
				}
			}
		})
	}
	if _, err := Load(); err == nil {
		t.Error("Load of nothing succeeded")
	}
	if _, err := Load(runs[0], t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither a sweep folder") {
		t.Errorf("a run and an empty folder: %v", err)
	}
}
