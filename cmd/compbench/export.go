package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"compbench/data"
	"compbench/models/pretrained"
	"compbench/train"
)

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", "export --run RUN --out DIR [--last]", `
Write a fine-tuned t5 or bart run (train --init hf:DIR) as a Hugging Face folder:
the source folder's config.json and tokenizer files, and model.safetensors with
the run's weights (best.safetensors when present, else the latest) under Hugging
Face's names and layouts, which T5ForConditionalGeneration or
BartForConditionalGeneration.from_pretrained(DIR) loads.`, stderr)
	runDir := fs.String("run", "", "run `DIR` (required)")
	out := fs.String("out", "", "folder `DIR` to write (required; must not exist unless --force)")
	last := fs.Bool("last", false, "use the latest weights instead of the best dev checkpoint")
	force := fs.Bool("force", false, "replace the files of an existing --out")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" || *out == "" {
		return usagef("export: --run and --out are required")
	}
	if err := checkNotInput(runPaths("--out", *out), runPaths("--run", *runDir)); err != nil {
		return err
	}
	if _, err := os.Stat(*out); err == nil && !*force {
		return fmt.Errorf("export: %s already exists (use --force to replace its files)", *out)
	}
	r, err := train.OpenRun(*runDir, !*last)
	if err != nil {
		return err
	}
	m, ok := r.Def.(*pretrained.Model)
	if !ok {
		return usagef("export: run %s is a %s model; export writes the pretrained models (t5, bart) back as Hugging Face folders", *runDir, r.Config.Model.Variant)
	}
	if abs, _ := filepath.Abs(*out); abs == r.Config.Model.Pretrained {
		return usagef("export: --out %s is the run's source folder", *out)
	}
	set := data.NewOutputSet(*force)
	if err := m.Save(set, *out); err != nil {
		set.Abort()
		return fmt.Errorf("export: %w", err)
	}
	if err := set.Commit(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s (weights of %s)\n", *out, r.WeightsPath())
	return nil
}
