#!/usr/bin/env bash
# Pretrained encoder-decoder benchmark: forward and backward of a random
# batch (16 x 32 -> 32 tokens) through a T5 of t5-small's shape with random
# weights, in compbench (models/pretrained, engine CPU backend) and in
# PyTorch (scripts/seq2seq_reference.py bench, the same weights), both on
# $THREADS threads (default 2). Needs python3 with torch; writes the
# checkpoint (about 240 MB) under ${PRETRAINED_BENCH_TMP:-/tmp/compbench-t5-bench}.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TMP=${PRETRAINED_BENCH_TMP:-/tmp/compbench-t5-bench}
THREADS=${THREADS:-2}
. scripts/bench_threads.sh
[ -f "$TMP/t5-small/model.safetensors" ] || "$PY" scripts/seq2seq_reference.py random-checkpoint "$TMP/t5-small"
echo "== t5-small-shaped T5, forward and backward, batch 16 x 32 -> 32 tokens, $THREADS threads"
out=$(GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=$THREADS PRETRAINED_BENCH_DIR="$TMP/t5-small" \
	go test -run XXX -bench BenchmarkT5TrainStep -benchtime 3x ./models/pretrained)
metric() { echo "$out" | awk -v u="$1" '/BenchmarkT5TrainStep/ {for (i = 1; i <= NF; i++) if ($(i+1) == u) print $i}'; }
go_ms=$(metric ms/step)
torch_best lower "$PY" scripts/seq2seq_reference.py bench "$TMP/t5-small" --steps 3
py_ms=$(echo "$TORCH_LINE" | awk '{print $3}')
echo "compbench ms/step $go_ms, tokens/s $(metric tokens/s) (peak $(metric MB-peak) MB)"
echo "$TORCH_LINE"
awk -v g="$go_ms" -v p="$py_ms" 'BEGIN {printf "time ratio compbench/pytorch %.2f (target <= 1.0)\n", g / p}'
echo "== the same T5, decoding with a key/value cache: 16 rows of 31 source tokens, 64 positions, $THREADS threads"
out=$(GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=$THREADS PRETRAINED_BENCH_DIR="$TMP/t5-small" \
	go test -run XXX -bench BenchmarkT5Decode -benchtime 3x ./models/pretrained)
go_tps=$(echo "$out" | awk '/BenchmarkT5Decode/ {for (i = 1; i <= NF; i++) if ($(i+1) == "tokens/s") print $i}')
torch_best higher "$PY" scripts/seq2seq_reference.py bench-decode "$TMP/t5-small" --reps 3
py_tps=$(echo "$TORCH_LINE" | awk '{print $3}')
echo "compbench decode tokens/s $go_tps"
echo "$TORCH_LINE"
awk -v g="$go_tps" -v p="$py_tps" 'BEGIN {printf "decoding time ratio compbench/pytorch %.2f (target <= 1.0)\n", p / g}'
