#!/usr/bin/env bash
# shi_table1.sh OUTDIR: Shi et al.'s SCAN Table 1 (zero-shot and few-shot
# exact match) with the paper's settings, as the sweep
# experiments/shi-table1.json run on this machine (GPU by default), then
# its report beside the paper's numbers. A thin wrapper over
#     compbench sweep --file SWEEP --out OUTDIR --local --time-limit TIME_LIMIT
#     compbench report OUTDIR --paper shi-table1
# for machines lent in slices of minutes: each call runs until TIME_LIMIT,
# the cells seed-major (every task and model of seed 1 first), stops the
# running cell at its checkpoint, and the next call with the same OUTDIR
# goes on from there (docs/sweep.md).
#
#   shi_table1.sh summary OUTDIR   prints the report only
#
# Settings are the sweep file's (Shi et al. §5 and App. C: 10,000 steps at
# batch 128 on freshly generated data, the paper-size Transformer, lr 1e-3
# with 16,000 warmup steps, 10,000 test examples, few-shot: 30 steps at lr
# 1e-4); to change what runs, copy and edit it.
#
#   COMPBENCH=gpu-kit/compbench  the binary (built with -tags gpu for cuda)
#   SWEEP=experiments/shi-table1.json
#   TIME_LIMIT=9m      wall time of this call
#   COMPBENCH_GEMM     the product kernels (docs/cuda.md); unset (auto) or
#                      cublas, the cuBLAS of pip's PyTorch is found as
#                      gpu_session.sh does
set -uo pipefail

usage() {
	echo "usage: scripts/shi_table1.sh OUTDIR   (or: scripts/shi_table1.sh summary OUTDIR)" >&2
	exit 2
}
mode=run
if [ "${1:-}" = summary ]; then
	mode=summary
	shift
fi
[ $# -eq 1 ] || usage
# OUTDIR, SWEEP and COMPBENCH are relative to where the script is called
# from; the script then works from the repository root.
mkdir -p "$1" || exit 1
OUT=$(cd "$1" && pwd)
BIN=${COMPBENCH:-}
[ -n "$BIN" ] && [ "${BIN#/}" = "$BIN" ] && BIN=$PWD/$BIN
SWEEP=${SWEEP:-}
[ -n "$SWEEP" ] && [ "${SWEEP#/}" = "$SWEEP" ] && SWEEP=$PWD/$SWEEP
cd "$(dirname "$0")/.."
SWEEP=${SWEEP:-$PWD/experiments/shi-table1.json}
BIN=${BIN:-$PWD/gpu-kit/compbench}
if [ ! -x "$BIN" ] && [ -f "$BIN.gz" ]; then
	gzip -dc "$BIN.gz" >"$BIN" && chmod +x "$BIN"
fi
if [ ! -x "$BIN" ]; then
	echo "shi_table1: no compbench binary at $BIN; set COMPBENCH or build the kit (make gpu-kit)" >&2
	exit 2
fi
if [ "${COMPBENCH_GEMM:-auto}" = auto ] || [ "$COMPBENCH_GEMM" = cublas ]; then
	. scripts/cublas_path.sh
	dir=$(cublas_path "${PYTHON:-python3}")
	[ -n "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
rc=0
if [ "$mode" = run ]; then
	"$BIN" sweep --file "$SWEEP" --out "$OUT" --local --time-limit "${TIME_LIMIT:-9m}" || rc=$?
fi
"$BIN" report "$OUT" --paper shi-table1 || rc=$?
exit "$rc"
