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

# --- Splits: compounds and MCD on all SCAN commands (BENCHMARKS.md "Splits") ---
go test ./data/split -run '^$' -bench 'MCDSCAN|CompoundsSCAN' -benchtime 1x
# --- end Splits ---

# --- Engine: paper-size plan and training step, TapeMachine against the engine on BLAS (docs/engine.md) ---
go test ./engine -run '^$' -bench 'PlanPaperSize|TrainStep/(tape|engine-blas)' -benchtime 3x
# --- end Engine ---
