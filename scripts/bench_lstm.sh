#!/usr/bin/env bash
# LSTM training-step benchmark: one lstm-attention step (forward, backward,
# Adam; batch 64, source 16, target 24 tokens, hidden 256, 2 layers) in
# compbench and the same model in PyTorch, both on $THREADS threads (default 2).
# Needs python3 with torch (Debian: python3-torch); PYTHON picks the
# interpreter. Thread settings: scripts/bench_threads.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
THREADS=${THREADS:-2}
. scripts/bench_threads.sh
echo "== lstm-attention training step, batch 64 x 16 -> 24 tokens, hidden 256, 2 layers, $THREADS threads"
# With it, the graph-unrolled alternative to the hand-written program
# (docs/engine.md, The LSTM models): a lower bound, on Gorgonia's TapeMachine.
go_out=$(OPENBLAS_NUM_THREADS=$THREADS GOMAXPROCS=$THREADS go test -run XXX -bench 'BenchmarkLSTMTrainStep$|BenchmarkLSTMUnrolledGraph' -benchtime 5x ./models/lstm)
metric() { echo "$go_out" | awk -v b="$1" -v m="$2" '$1 ~ b {for (i = 1; i <= NF; i++) if ($(i+1) == m) print $i}'; }
go_ms=$(metric BenchmarkLSTMTrainStep ms/step)
unrolled_ms=$(metric BenchmarkLSTMUnrolledGraph ms/step)
unrolled_build=$(metric BenchmarkLSTMUnrolledGraph build-ms)
torch_best lower "$PY" scripts/bench_torch_lstm.py --steps 5
py_line=$TORCH_LINE
py_ms=$(echo "$py_line" | awk '{print $3}')
echo "compbench ms/step $go_ms"
echo "graph-unrolled LSTM without attention (TapeMachine) ms/step $unrolled_ms, build and differentiate per batch shape ms $unrolled_build"
awk -v g="$go_ms" -v u="$unrolled_ms" 'BEGIN {printf "time ratio unrolled graph/program %.2f (the program is kept while this is > 1.0)\n", u / g}'
echo "$py_line"
awk -v g="$go_ms" -v p="$py_ms" 'BEGIN {printf "time ratio compbench/pytorch %.2f (target <= 1.0)\n", g / p}'
