package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"compbench/data"
	"compbench/eval"
)

// evalFlags are the flags that every scoring command shares.
type evalFlags struct {
	gold         string
	allowMissing bool
	normalize    string
	sepToken     string
	execute      bool
	force        bool
	asJSON       bool
}

func (f *evalFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.gold, "gold", "", "gold records `FILE` (JSONL, .tsv or SCAN .txt; required)")
	fs.BoolVar(&f.allowMissing, "allow-missing", false, "score even if ids are missing on either side (a missing prediction counts as wrong)")
	fs.StringVar(&f.normalize, "normalize", "", "comma-separated `LIST` of normalizers applied before exact match: "+strings.Join(eval.NormalizerNames, ","))
	fs.StringVar(&f.sepToken, "sep-token", eval.DefaultSeparator, "separator `TOKEN` dropped by the sep normalizer")
	fs.BoolVar(&f.execute, "execute", false, "RobustFill: correct when the predicted program reproduces every output from its input")
	fs.BoolVar(&f.force, "force", false, "replace existing output files")
	fs.BoolVar(&f.asJSON, "json", false, "print JSON instead of a table")
}

// options checks the shared flags and returns the scoring options.
func (f *evalFlags) options() (eval.Options, error) {
	if f.gold == "" {
		return eval.Options{}, usagef("--gold is required")
	}
	ns, err := eval.ParseNormalizers(f.normalize, f.sepToken)
	if err != nil {
		return eval.Options{}, usagef("--normalize: %v", err)
	}
	return eval.Options{Normalizers: ns, Execute: f.execute}, nil
}

// listFlag collects a repeated string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", "eval --gold test.jsonl --pred preds.jsonl [--by category] [flags]",
		`Exact match of predictions against gold records, joined by id, with optional
normalizers; --execute scores RobustFill programs by running them; --tokens
adds SCAN token accuracy and the longest correct prefix. --by category adds
exact match for each gold category (a .tsv file's third column, as COGS
publishes it, or "category" in JSONL) and, when the categories are COGS's
cases, for its lexical and structural groups (cp_recursion, pp_recursion and
obj_pp_to_subj_pp are structural, the other cases lexical), for all 21 cases
together (generalization) and for in_distribution.`, stderr)
	var ef evalFlags
	ef.register(fs)
	pred := fs.String("pred", "", "predictions `FILE` (JSONL {\"id\",\"prediction\"}, required)")
	tokens := fs.Bool("tokens", false, "also report token accuracy and longest correct prefix (SCAN)")
	perEx := fs.String("per-example", "", "write per-example judgements to `FILE` (JSONL)")
	by := fs.String("by", "", "also break exact match down `BY` the gold records' category (the only value: category)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	opt, err := ef.options()
	if err != nil {
		return err
	}
	if *pred == "" {
		return usagef("--pred is required")
	}
	if *by != "" && *by != "category" {
		return usagef("--by %q: want category", *by)
	}
	opt.Tokens = *tokens
	if *perEx != "" {
		if err := checkNotInput(files("--per-example", *perEx), join(files("--gold", ef.gold), files("--pred", *pred))); err != nil {
			return err
		}
		if err := data.CheckFree(*perEx, ef.force); err != nil {
			return err
		}
	}
	gold, err := data.ReadRecords(ef.gold)
	if err != nil {
		return err
	}
	ps, err := eval.ReadPredictions(*pred)
	if err != nil {
		return err
	}
	j, err := eval.Join(gold, ps, ef.allowMissing)
	if err != nil {
		return fmt.Errorf("%s: %w", *pred, err)
	}
	exs, sum, err := eval.Score(j, opt)
	if err != nil {
		return err
	}
	if *by != "" {
		if sum.ByCategory, err = eval.ByCategory(j, exs); err != nil {
			return fmt.Errorf("--by category: %s: %w", ef.gold, err)
		}
	}
	if *perEx != "" {
		if err := data.WriteOutput(*perEx, ef.force, func(w io.Writer) error { return eval.WriteExamples(w, exs) }); err != nil {
			return err
		}
	}
	if ef.asJSON {
		return printJSON(stdout, sum)
	}
	return sum.WriteTable(stdout)
}
