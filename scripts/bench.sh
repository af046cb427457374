#!/usr/bin/env bash
# make bench: every speed benchmark of compbench, each block in its own script.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- LSTM: training step against PyTorch (scripts/bench_lstm.sh) ---
./scripts/bench_lstm.sh
# --- end LSTM ---

# --- Transformer: training step against PyTorch, greedy decoding (scripts/bench_transformer.sh) ---
./scripts/bench_transformer.sh
# --- end Transformer ---

# --- GPT-2: scoring against PyTorch, GPT-2 medium's peak memory (scripts/bench_gpt2.sh) ---
./scripts/bench_gpt2.sh
# --- end GPT-2 ---

# --- Pretrained T5 (t5-small's shape, random weights): forward and backward against PyTorch (scripts/bench_pretrained.sh) ---
./scripts/bench_pretrained.sh
# --- end Pretrained ---

# --- Splits: compounds and MCD on all SCAN commands, and MCD on 60,000 generated SCAN commands (BENCHMARKS.md "Splits") ---
go test ./data/split -run '^$' -bench 'MCDSCAN|CompoundsSCAN' -benchtime 1x
mcd_dir=$(mktemp -d)
go build -o "$mcd_dir/compbench" ./cmd/compbench
"$mcd_dir/compbench" gen scan --task none --train-size 60000 --dev-size 0 --test-size 1 --finetune-size 0 --seed 1 --out "$mcd_dir/gen" >/dev/null
# split prints D_A, D_C and the length ratios; time -v adds CPU time and peak RSS.
/usr/bin/time -v "$mcd_dir/compbench" split mcd --in "$mcd_dir/gen/train.jsonl" --out "$mcd_dir/mcd60k" --seed 1 2>"$mcd_dir/time.txt"
grep -E 'Elapsed|User time|System time|Maximum resident' "$mcd_dir/time.txt"
grep -o '"compound_max_size":[0-9]*,"compound_keep":[0-9]*' "$mcd_dir/mcd60k/split.json"
rm -rf "$mcd_dir"
# --- end Splits ---

# --- Engine: paper-size plan and training step on the CPU backend (docs/engine.md) ---
go test ./engine -run '^$' -bench 'PlanPaperSize|TrainStep/engine-blas' -benchtime 3x
# --- end Engine ---
