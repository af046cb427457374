#!/usr/bin/env bash
# The compbench demo: generate a SCAN benchmark for the length task into a fresh
# temporary folder and print its summary. Run it with "make demo", which
# builds bin/compbench first.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${COMPBENCH:-bin/compbench}
if [ ! -x "$BIN" ]; then
  echo "demo: $BIN not found; run 'make demo' (it builds the binary first)" >&2
  exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/compbench-demo.XXXXXX")
echo "== demo folder: $work"

echo "== SCAN, length task (train 1-6 parts, test 7-10)"
"$BIN" gen scan --task length --train-size 2000 --dev-size 200 --test-size 500 --finetune-size 40 --seed 1 --out "$work/scan-length"
echo "== first training record:"
head -n 1 "$work/scan-length/train.jsonl" | cut -c 1-300
echo "..."
echo "== demo done; files are in $work"

# --- Transformer: one experiment end to end (compbench run) ---
echo "== Transformer on SCAN length: generate, train 100 steps, predict, fine-tune, exact match"
"$BIN" run --task length --models transformer --train-size 500 --dev-size 50 --test-size 50 \
  --steps 100 --eval-limit 50 --finetune-steps 10 --seed 1 --out "$work/run-length"
echo "== run folders and predictions are in $work/run-length"
# --- end Transformer ---
