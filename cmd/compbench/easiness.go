package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"compbench/data"
	"compbench/data/structure"
	"compbench/eval"
	"compbench/progress"
)

// recordTrees parses each record's program; with skipBad, records whose
// program does not parse are dropped and counted, otherwise the first one
// is an error naming the file and id.
func recordTrees(path string, recs []data.Record, kind structure.TreeKind, skipBad bool) ([]data.Record, []*data.Tree, int, error) {
	var keep []data.Record
	var trees []*data.Tree
	bad := 0
	for i := range recs {
		t, err := structure.RecordTree(&recs[i], kind)
		if err != nil {
			if !skipBad {
				return nil, nil, 0, fmt.Errorf("%s: record %q: %w (pass --skip-bad to skip it)", path, recs[i].ID, err)
			}
			bad++
			continue
		}
		keep = append(keep, recs[i])
		trees = append(trees, t)
	}
	return keep, trees, bad, nil
}

func runEasiness(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("easiness", "easiness --train train.jsonl --test test.jsonl --out easiness.jsonl [flags]",
		`Predicted easiness of each test example (Bogin et al. §4.3): the minimum,
over its local structures unobserved in training, of the highest similarity
to an observed structure (1 when every structure was observed), with the
list of unobserved structures.`, stderr)
	train := fs.String("train", "", "training records `FILE` (required)")
	test := fs.String("test", "", "test records `FILE` (required)")
	out := fs.String("out", "", "output `FILE` (JSONL {\"id\",\"easiness\",\"unobserved\"}, required)")
	n := fs.Int("n", 2, "structure size n of n-LS (2, 3 or 4); n-gram order for --variant bigram")
	variant := fs.String("variant", "full", "decision rule: "+joinVariants())
	seed := fs.Uint64("seed", 1, "seed for --variant random")
	tree := fs.String("tree", "auto", "where programs come from: "+joinKinds())
	skipBad := fs.Bool("skip-bad", false, "skip records whose program does not parse (counted)")
	force := fs.Bool("force", false, "replace an existing output file")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *train == "" || *test == "" || *out == "" {
		return usagef("--train, --test and --out are required")
	}
	cfg := structure.Config{N: *n, Variant: structure.Variant(*variant), Seed: *seed}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	kind, err := structure.ParseTreeKind(*tree)
	if err != nil {
		return usagef("--tree: %v", err)
	}
	if err := checkNotInput(files("--out", *out), join(files("--train", *train), files("--test", *test))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	trRecs, err := data.ReadRecords(*train)
	if err != nil {
		return err
	}
	teRecs, err := data.ReadRecords(*test)
	if err != nil {
		return err
	}
	_, trTrees, badTrain, err := recordTrees(*train, trRecs, kind, *skipBad)
	if err != nil {
		return err
	}
	teRecs, teTrees, badTest, err := recordTrees(*test, teRecs, kind, *skipBad)
	if err != nil {
		return err
	}
	model, err := structure.Train(trTrees, cfg)
	if err != nil {
		return err
	}
	bar := progress.New(stderr, "easiness", int64(len(teTrees)))
	lines := make([]eval.EasinessLine, len(teTrees))
	sum, withUnobs := 0.0, 0
	const chunk = 1024
	for lo := 0; lo < len(teTrees); lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+chunk, len(teTrees))
		for i, r := range model.Score(teTrees[lo:hi]) {
			k := lo + i
			lines[k] = eval.EasinessLine{ID: teRecs[k].ID, Easiness: r.Easiness, Unobserved: r.Unobserved}
			sum += r.Easiness
			if len(r.Unobserved) > 0 {
				withUnobs++
			}
		}
		bar.Add(int64(hi - lo))
	}
	bar.Finish()
	set := data.NewOutputSet(*force)
	defer set.Abort()
	w, err := set.Create(*out)
	if err != nil {
		return err
	}
	if err := eval.WriteEasiness(w, lines); err != nil {
		return err
	}
	if err := set.Commit(); err != nil {
		return err
	}
	rep := struct {
		Variant      string  `json:"variant"`
		N            int     `json:"n"`
		Examples     int     `json:"examples"`
		Mean         float64 `json:"mean_easiness"`
		WithUnobs    int     `json:"with_unobserved"`
		SkippedTrain int     `json:"skipped_train"`
		SkippedTest  int     `json:"skipped_test"`
	}{*variant, *n, len(lines), sum / float64(max(len(lines), 1)), withUnobs, badTrain, badTest}
	if *asJSON {
		return printJSON(stdout, rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\tn\texamples\tmean-easiness\twith-unobserved\tskipped(train/test)")
	fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t%d\t%d/%d\n", rep.Variant, rep.N, rep.Examples, rep.Mean, rep.WithUnobs, badTrain, badTest)
	return tw.Flush()
}

func joinVariants() string {
	var s []string
	for _, v := range structure.Variants {
		s = append(s, string(v))
	}
	return strings.Join(s, "|")
}

func joinKinds() string {
	var s []string
	for _, k := range structure.TreeKinds {
		s = append(s, string(k))
	}
	return strings.Join(s, "|")
}
