package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"compbench/data"
	"compbench/eval"
)

// agreeReport is the JSON output of agree.
type agreeReport struct {
	Models    []agreeModel `json:"models"`
	Examples  int          `json:"examples"`
	Agreement []agreeRate  `json:"agreement"`
}

type agreeModel struct {
	Pred string       `json:"pred"`
	Sum  eval.Summary `json:"summary"`
}

type agreeRate struct {
	K      int     `json:"k"`
	M      int     `json:"m"`
	Rate   float64 `json:"rate"`
	Random float64 `json:"random"`
}

func runAgree(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("agree", "agree --gold test.jsonl --pred A --pred B [--pred C ...] [flags]",
		`Per-model exact match, the rate at which all models agree (all right or all
wrong) and at which a majority agrees, beside the rate expected from
independent models with the same accuracies (Bogin et al. Table 2).`, stderr)
	var ef evalFlags
	ef.register(fs)
	var preds listFlag
	fs.Var(&preds, "pred", "predictions `FILE` of one model (repeat, at least two)")
	k := fs.Int("k", 0, "also report agreement of at least `K` models (default: all and majority only)")
	matrix := fs.String("matrix", "", "write the per-example correctness matrix to `FILE` (JSONL)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, err := ef.options()
	if err != nil {
		return err
	}
	if len(preds) < 2 {
		return usagef("agree needs at least two --pred files (got %d)", len(preds))
	}
	m := len(preds)
	// --k 0 is the flag's "not given"; given, it is a mistake.
	if (*k != 0 || isSet(fs, "k")) && (*k < 1 || *k > m) {
		return usagef("--k %d: want between 1 and the number of models (%d)", *k, m)
	}
	if *matrix != "" {
		if err := checkNotInput(files("--matrix", *matrix), join(files("--gold", ef.gold), files("--pred", preds...))); err != nil {
			return err
		}
		if err := data.CheckFree(*matrix, ef.force); err != nil {
			return err
		}
	}
	gold, err := data.ReadRecords(ef.gold)
	if err != nil {
		return err
	}
	mat, sums, err := eval.Models(gold, preds, ef.allowMissing, opt)
	if err != nil {
		return err
	}
	rep := agreeReport{Examples: mat.N}
	for i, p := range preds {
		rep.Models = append(rep.Models, agreeModel{Pred: p, Sum: sums[i]})
	}
	acc := mat.Accuracies()
	ks := []int{m, m/2 + 1}
	if *k != 0 && *k != m && *k != m/2+1 {
		ks = append(ks, *k)
	}
	if m/2+1 == m {
		ks = ks[:1]
		if *k != 0 && *k != m {
			ks = append(ks, *k)
		}
	}
	for _, kk := range ks {
		rep.Agreement = append(rep.Agreement, agreeRate{K: kk, M: m, Rate: mat.Agreement(kk), Random: eval.RandomAgreement(acc, kk)})
	}
	if *matrix != "" {
		set := data.NewOutputSet(ef.force)
		defer set.Abort()
		w, err := set.Create(*matrix)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		for i := range mat.N {
			row := struct {
				ID       string `json:"id"`
				Correct  []bool `json:"correct"`
				NCorrect int    `json:"n_correct"`
			}{gold[i].ID, mat.Bits[i*m : (i+1)*m], mat.Correct(i)}
			if err := enc.Encode(&row); err != nil {
				return err
			}
		}
		if err := set.Commit(); err != nil {
			return err
		}
	}
	if ef.asJSON {
		return printJSON(stdout, rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tpredictions\texamples\tcorrect\tEM")
	for i, md := range rep.Models {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.4f\n", i+1, md.Pred, md.Sum.N, md.Sum.Correct, md.Sum.Accuracy)
	}
	fmt.Fprintln(tw, "\nagreement\trate\trandom")
	for _, a := range rep.Agreement {
		label := fmt.Sprintf("%d+/%d", a.K, a.M)
		if a.K == a.M {
			label = fmt.Sprintf("%d/%d", a.K, a.M)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\n", label, a.Rate, a.Random)
	}
	return tw.Flush()
}
