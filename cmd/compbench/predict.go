package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"compbench/blas"
	"compbench/data"
	"compbench/engine"
	"compbench/models"
	"compbench/progress"
	"compbench/train"
)

func runPredict(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("predict", "predict --run RUN --in test.jsonl --out preds.jsonl [--beam K --alpha 0.6 --max-len L]", `
Decode records with a trained run (best.safetensors when present, else the latest
weights): greedy by default, beam search with the GNMT length penalty with --beam.
Writes one {"id","prediction","score"[,"beam"]} line per record, separators removed.`, stderr)
	runDir := fs.String("run", "", "run `DIR` (required)")
	in := fs.String("in", "", "records `FILE` to decode (JSONL, .tsv or SCAN .txt; required)")
	out := fs.String("out", "", "predictions `FILE` (required)")
	beam := fs.Int("beam", 1, "beam size (1: greedy)")
	alpha := fs.Float64("alpha", 0.6, "length penalty exponent for beam search")
	maxLen := fs.Int("max-len", 0, "longest output in tokens (0: the model's limit)")
	batch := fs.Int("batch", 64, "examples decoded together")
	last := fs.Bool("last", false, "use the latest weights instead of the best dev checkpoint")
	force := fs.Bool("force", false, "replace an existing --out")
	devName := deviceFlag(fs)
	cacheMB := graphCacheFlag(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runDir == "" || *in == "" || *out == "" {
		return usagef("predict: --run, --in and --out are required")
	}
	if *beam < 1 || *batch < 1 || *maxLen < 0 || *alpha < 0 {
		return usagef("predict: --beam and --batch must be >= 1, --max-len and --alpha >= 0")
	}
	dev, err := parseDevice(*devName)
	if err != nil {
		return err
	}
	if err := setGraphCache(*cacheMB); err != nil {
		return err
	}
	if err := checkNotInput(files("--out", *out), join(runPaths("--run", *runDir), files("--in", *in))); err != nil {
		return err
	}
	if err := data.CheckFree(*out, *force); err != nil {
		return err
	}
	blas.Use()
	r, err := train.OpenRun(*runDir, !*last)
	if err != nil {
		return err
	}
	be, release, err := dev.open()
	if err != nil {
		return err
	}
	defer release()
	done, err := r.UseBackend(be)
	if err != nil {
		return err
	}
	defer done()
	fmt.Fprintf(stderr, "predict: engine executor on %s\n", engine.Describe(be))
	recs, err := readDecodeInput(r, *in, *beam, *batch, *maxLen, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	preds, unk, err := train.Predict(ctx, r, recs, train.DecodeOptions{Beam: *beam, Alpha: *alpha, MaxLen: *maxLen, Batch: *batch}, progress.To(stderr))
	if err != nil {
		return err
	}
	el := time.Since(start)
	if unk > 0 {
		fmt.Fprintf(stderr, "warning: %d source tokens are not in the run's vocabulary and were read as <unk>\n", unk)
	}
	if err := train.WritePredictions(*out, preds, *force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d predictions to %s; %s; decoded in %s (%.0f output tokens/s)\n",
		len(preds), *out, train.ExactMatchNote(recs, preds), el.Round(time.Millisecond), train.OutputTokens(preds)/el.Seconds())
	return nil
}

// checkDecode refuses a beam wider than the tokens the run can output (the
// target vocabulary, and for a copying model the source positions too) and
// a decoding working set larger than the machine's memory.
func checkDecode(r *train.Run, recs []data.Record, beam, batch, maxLen int) error {
	cfg := r.Config.Model
	srcLen, _ := models.DataLengths(cfg, recs)
	vocab := len(r.Vocab.Target)
	if models.Copies(cfg.Variant) {
		vocab += srcLen
	}
	if beam > vocab {
		return usagef("predict: --beam %d is wider than the %d tokens the run can output; use at most %d", beam, vocab, vocab)
	}
	if maxLen == 0 {
		maxLen = cfg.MaxTgtLen
	}
	rows := min(batch, len(recs)) * beam
	return checkMemory("predict", memPart{"decoding", "--beam, --batch or --max-len (max_tgt_len of the run)", models.DecodeBytes(cfg, rows, srcLen, maxLen, vocab)})
}

// readDecodeInput reads the records to decode, refuses a decoding that
// cannot work (checkDecode) and warns of what the run's limits cut:
// sources are cut to its max_src_len, and outputs longer than max_tgt_len
// cannot be produced.
func readDecodeInput(r *train.Run, in string, beam, batch, maxLen int, stderr io.Writer) ([]data.Record, error) {
	recs, err := data.ReadRecords(in)
	if err != nil {
		return nil, err
	}
	// Outputs are optional: predict also decodes unlabelled records.
	if err := data.RequireText(recs, false); err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	if err := checkDecode(r, recs, beam, batch, maxLen); err != nil {
		return nil, err
	}
	if note := models.TruncationNote(r.Config.Model, recs); note != "" {
		fmt.Fprintf(stderr, "warning: %s, under the run's limits: %s\n", in, note)
	}
	return recs, nil
}
