package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"compbench/sweep"
)

// TestSweepByCategory: a dataset whose test records all name a category
// (a COGS-style .tsv's third column) gets eval --by category, and the cell's
// result.json carries the breakdown; one without categories does not.
func TestSweepByCategory(t *testing.T) {
	sweepEnv(t)
	dir := t.TempDir()
	recs, err := os.ReadFile(tinyData(t))
	if err != nil {
		t.Fatal(err)
	}
	// The tiny training set as a 3-column TSV: half one case, half another.
	var tsv strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(recs)), "\n") {
		var r struct{ Input, Output string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		cat := []string{"in_distribution", "cp_recursion"}[i%2]
		tsv.WriteString(r.Input + "\t" + r.Output + "\t" + cat + "\n")
	}
	cats := filepath.Join(dir, "cats.tsv")
	if err := os.WriteFile(cats, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := tinySweep(t, dir, map[string]string{"cats": cats, "plain": tinyData(t)}, []string{"transformer"}, "1", 2, 0)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--local"}, &stdout, &stderr); err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr.String())
	}
	for _, c := range []struct {
		cell  string
		cases []string
	}{
		{"cats.transformer.seed1", []string{"cp_recursion", "in_distribution"}},
		{"plain.transformer.seed1", nil},
	} {
		t.Run(c.cell, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(out, sweep.CellsDir, c.cell, sweep.ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			var res sweep.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			var got []string
			if res.ByCategory != nil {
				for _, g := range res.ByCategory.Categories {
					got = append(got, g.Name)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.cases, ",") {
				t.Errorf("by_category cases %v, want %v\n%s", got, c.cases, b)
			}
		})
	}
}
