package main

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// command is one subcommand of the CLI.
type command struct {
	// summary is the one line shown by "compbench help".
	summary string
	// run parses its own flags from args and does the work.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the whole CLI: one visible map, no registration magic.
var commands = map[string]command{
	"first-error": {"share of wrong predictions whose first error completes an unobserved 2-LS", runFirstError},
	"select":      {"budgeted training-set selection by local structures (nls) or at random", runSelect},
	"correlate":   {"Pearson correlation of split easiness or divergence with mean model EM", runCorrelate},
	"masks":       {"print a decoder attention mask (causal, sep-full, sep-to-sep-and-last, sep-to-last) for a target", runMasks},
	"cfq":         {"import CFQ dataset.json and published CFQ / SCAN MCD split files; export splits", runCFQ},
	"split":       {"re-split a dataset: random, length, template, mcd, tmcd, likelihood, grammar, nls", runSplit},
	"stats":       {"divergences, coverage and length ratios of a train/test pair", runStats},
	"easiness":    {"predicted easiness of test examples from unobserved local structures (n-LS)", runEasiness},
	"auc":         {"ROC AUC of predicted easiness against majority model correctness", runAUC},
	"eval":        {"exact match / execution accuracy of predictions against gold records", runEval},
	"agree":       {"agreement rates between models and their random baseline", runAgree},
	"train":       {"train a model on JSONL records: Transformers (transformer, relative, *-sep, decompositional masks, universal), LSTMs (lstm-attention, lstm-copy), or fine-tune T5/BART (--init hf:DIR)", runTrain},
	"convert":     {"convert record files (.tsv as COGS publishes them, SCAN's IN: ... OUT: ... text) to JSONL records, and JSONL to SCAN text", runConvert},
	"export":      {"write a fine-tuned t5 or bart run as a Hugging Face folder", runExport},
	"predict":     {"decode records with a trained run (greedy or beam search)", runPredict},
	"finetune":    {"few-shot fine-tune a trained run with a constant learning rate", runFinetune},
	"run":         {"one experiment end to end: generate, train, predict, fine-tune, exact match table", runRun},
	"gen":         {"generate a SCAN, RobustFill or grammar benchmark, or the original SCAN pool (scan-original)", runGen},
	"completion":  {"print a bash or zsh completion script (source <(compbench completion bash))", runCompletion},
	"version":     {"print the build: module version, VCS revision, Go version and build tags", runVersion},
	"sweep":       {"run a grid of experiments (models x tasks x seeds) here (--local) or as a Slurm job array (--slurm)", runSweep},
	"report":      {"tables (mean ± sd over seeds), CSV and an HTML page with plots for a sweep or a run folder", runReport},
	"score":       {"GPT-2 log-likelihood of each record (prompted, or k-fold fine-tuned) for likelihood splits", runScore},
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "compbench: data, splits, models and analysis for compositional generalization")
	fmt.Fprintln(w, "\nusage: compbench COMMAND [flags]   (compbench COMMAND --help for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}
