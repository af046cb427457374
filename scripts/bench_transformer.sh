#!/usr/bin/env bash
# Transformer benchmarks: one paper-size training step (forward, backward,
# clipping, Adam; batch 64, source 16, target 48 tokens, 3+3 layers, d 256,
# 4 heads, MLP 512) in compbench and the same model in PyTorch, both on
# $THREADS threads (default 2), then greedy decoding speed and peak memory.
# Needs python3 with torch (Debian: python3-torch); PYTHON picks the
# interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
THREADS=${THREADS:-2}
. scripts/bench_threads.sh
echo "== transformer training step, batch 64 x 16 -> 48 tokens, paper size, $THREADS threads"
out=$(GOMAXPROCS=$THREADS OPENBLAS_NUM_THREADS=$THREADS go test -run XXX -bench 'BenchmarkTransformerTrainStep|BenchmarkUniversalTrainStep|BenchmarkGreedyDecode' -benchtime 5x ./train)
metric() { echo "$out" | awk -v b="$1" -v u="$2" '$1 ~ b {for (i = 1; i <= NF; i++) if ($(i+1) == u) print $i}'; }
go_ms=$(metric TransformerTrainStep ms/step)
torch_best lower "$PY" scripts/bench_torch_transformer.py --steps 5
py_line=$TORCH_LINE
py_ms=$(echo "$py_line" | awk '{print $3}')
# CPU time per step (all threads): the same script with its clock swapped
# for process time. On a busy machine wall times swing with the load; CPU
# times much less.
go_cpu=$(metric TransformerTrainStep cpu-ms/step)
py_cpu=$(OPENBLAS_NUM_THREADS=$TORCH_BLAS OMP_NUM_THREADS=$TORCH_THREADS "$PY" -c 'import runpy, sys, time
time.perf_counter = time.process_time
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")' scripts/bench_torch_transformer.py --threads "$TORCH_THREADS" --steps 5 | awk 'NR == 1 {print $3}')
echo "compbench ms/step $go_ms, cpu-ms/step $go_cpu (peak $(metric TransformerTrainStep MB-peak) MB)"
echo "$py_line, cpu-ms/step $py_cpu"
awk -v g="$go_ms" -v p="$py_ms" 'BEGIN {printf "time ratio compbench/pytorch %.2f (target <= 1.0)\n", g / p}'
awk -v g="$go_cpu" -v p="$py_cpu" 'BEGIN {printf "cpu-time ratio compbench/pytorch %.2f\n", g / p}'
echo "greedy decoding: $(metric GreedyDecode tokens/s) tokens/s (peak $(metric GreedyDecode MB-peak) MB)"
echo "== universal transformer training step, the same batch, d 256, 6 steps of one shared layer per stack, $THREADS threads"
ut_ms=$(metric UniversalTrainStep ms/step)
torch_best lower "$PY" scripts/bench_torch_transformer.py --universal 6 --steps 5
ut_py=$(echo "$TORCH_LINE" | awk '{print $3}')
echo "compbench ms/step $ut_ms (peak $(metric UniversalTrainStep MB-peak) MB)"
echo "$TORCH_LINE"
awk -v g="$ut_ms" -v p="$ut_py" 'BEGIN {printf "time ratio compbench/pytorch %.2f (target <= 1.0)\n", g / p}'
