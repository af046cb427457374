#!/usr/bin/env bash
# GPT-2 scoring benchmark: compbench vs PyTorch CPU on the same random GPT-2
# small weights and the same batch shape (32 x 32 tokens), then peak memory of
# `compbench score` with GPT-2 medium. Needs python3 with torch; writes its
# checkpoints under ${GPT2_BENCH_TMP:-/tmp/compbench-gpt2-bench}. GPT2_MEMORY_ONLY=1
# skips the throughput comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TMP=${GPT2_BENCH_TMP:-/tmp/compbench-gpt2-bench}
THREADS=${THREADS:-$(nproc)}
. scripts/bench_threads.sh
mkdir -p "$TMP"
[ -f "$TMP/small/model.safetensors" ] || "$PY" scripts/gpt2_reference.py random-checkpoint "$TMP/small" --size small
cp -f lm/testdata/gpt2-tiny/encoder.json lm/testdata/gpt2-tiny/vocab.bpe "$TMP/small/"

if [ -z "${GPT2_MEMORY_ONLY:-}" ]; then
	echo "== GPT-2 small scoring, batch 32 x 32 tokens, $THREADS threads"
	go_tps=$(GOMAXPROCS=$THREADS GPT2_BENCH_DIR="$TMP/small" go test -run XXX -bench BenchmarkGPT2Score -benchtime 3x ./models/gpt2 |
		awk '/BenchmarkGPT2Score/ {for (i = 1; i <= NF; i++) if ($(i+1) == "tokens/s") print $i}')
	torch_best higher "$PY" scripts/gpt2_reference.py bench "$TMP/small" --batch 32 --seq 32 --batches 3
	py_line=$TORCH_LINE
	py_tps=$(echo "$py_line" | awk '{print $3}')
	echo "compbench tokens/s $go_tps"
	echo "$py_line"
	awk -v g="$go_tps" -v p="$py_tps" 'BEGIN {printf "time ratio compbench/pytorch %.2f (target <= 1.0)\n", p / g}'
fi

echo "== GPT-2 medium scoring peak memory (target < 2 GB)"
[ -f "$TMP/medium/model.safetensors" ] || "$PY" scripts/gpt2_reference.py random-checkpoint "$TMP/medium" --size medium
cp -f lm/testdata/gpt2-tiny/encoder.json lm/testdata/gpt2-tiny/vocab.bpe "$TMP/medium/"
go build -o bin/compbench ./cmd/compbench
for i in $(seq 64); do echo "{\"id\":\"$i\",\"input\":\"jump twice and walk around left after run thrice $i\",\"output\":\"X\"}"; done > "$TMP/in.jsonl"
/usr/bin/time -v bin/compbench score --lm "$TMP/medium" --in "$TMP/in.jsonl" --out "$TMP/medium-scores.jsonl" --force 2> "$TMP/time.txt" || { cat "$TMP/time.txt"; exit 1; }
awk '/Maximum resident set size/ {printf "peak RSS %.2f GB\n", $NF / 1048576}' "$TMP/time.txt"
