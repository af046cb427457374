#!/usr/bin/env bash
# shi_table1.sh OUTDIR: Shi et al.'s SCAN Table 1 (zero-shot and few-shot
# exact match) with the paper's settings, one `compbench run` per task, seed
# and model, on a GPU by default. Resumable: a run whose OUTDIR/TASK/seedS/
# MODEL.md exists is skipped, so calling it again with the same OUTDIR goes
# on where the last call stopped, and a call cut short loses only the run it
# was in. Each run works in a scratch folder that is deleted afterwards (the
# paper's 1.28M training examples are 1.3 GB of JSONL); OUTDIR keeps the
# results table, the log and metrics.jsonl of each run.
#
#   shi_table1.sh summary OUTDIR   prints mean ± standard deviation over the
#                                  seeds beside the paper's numbers (markdown)
#
# Settings (Shi et al. §5 and App. C): 10,000 steps at batch 128 on freshly
# generated data (STEPS·BATCH examples, none repeated), the paper-size
# Transformer (3+3 layers, 4 heads, d 256, MLP 512, dropout 0.1), lr 1e-3
# with 16,000 warmup steps and inverse square root decay; 10,000 test
# examples; few-shot: 30 steps at constant lr 1e-4 on one batch of 20
# training- and 20 test-distribution examples.
#
#   COMPBENCH=gpu-kit/compbench  the binary (built with -tags gpu for cuda)
#   DEVICE=cuda        --device of every run
#   COMPBENCH_GEMM       the product kernels (docs/cuda.md); with cublas, the
#                      cuBLAS of pip's PyTorch is found as gpu_session.sh does
#   TASKS="length compose-different-concepts"
#   MODELS="transformer relative relative-sep sep-full sep-to-sep-and-last sep-to-last"
#                      (add transformer-sep for the table's second row)
#   SEEDS="1 2 3"      the loops run seed-major: every task and model of seed
#                      1 first, so a short budget still gives whole columns
#   STEPS=10000 BATCH=128 TEST=10000   TRAIN=STEPS·BATCH
#   BUDGET_S=540       wall-clock budget of this call; a run is started only
#                      with at least MIN_RUN_S=60 seconds left
#   EXTRA="..."        more flags for compbench run (they override the above,
#                      e.g. EXTRA="--layers 1 --dim 16 --mlp 32" to try it)
#   SCRATCH=${TMPDIR:-/tmp}  where the runs' data and checkpoints go
set -uo pipefail

# Shi et al. Table 1, the columns of the two tasks run here: zero-shot and
# few-shot mean ± σ over 3 trials ("Length Generalization 1-6 to 7-10" and
# "Compose Diff. Concepts").
paper() {
	cat <<'EOF'
transformer length 26.9±0.7 28.7±1.7
transformer compose-different-concepts 10.5±2.4 56.5±6.4
transformer-sep length 26.7±0.6 32.6±2.2
transformer-sep compose-different-concepts 37.3±2.8 89.3±1.7
relative length 46.1±3.0 65.3±1.1
relative compose-different-concepts 29.2±4.6 53.0±3.8
relative-sep length 42.1±3.5 74.5±6.9
relative-sep compose-different-concepts 46.7±4.3 76.4±6.3
sep-full length 50.2±2.0 72.3±2.8
sep-full compose-different-concepts 36.7±2.4 71.2±9.3
sep-to-sep-and-last length 47.2±2.5 75.0±2.3
sep-to-sep-and-last compose-different-concepts 49.0±6.6 72.3±8.8
sep-to-last length 41.9±3.3 70.8±4.5
sep-to-last compose-different-concepts 74.4±9.3 84.9±5.2
EOF
}

# summary OUTDIR: one row per task and model found in OUTDIR.
summary() {
	local out=$1
	echo "| task | model | seeds | zero-shot EM | few-shot EM | paper zero-shot | paper few-shot |"
	echo "|---|---|---|---|---|---|---|"
	# Each MODEL.md holds compbench run's table; its model row is
	# | model | steps | dev EM | zero-shot | few-shot | time |.
	for f in "$out"/*/seed*/*.md; do
		[ -e "$f" ] || continue
		local rel=${f#"$out"/}
		local task=${rel%%/*}
		awk -F'|' -v task="$task" 'NR > 2 && NF >= 7 && $2 !~ /model|---/ {
			gsub(/ /, "", $2); gsub(/ /, "", $5); gsub(/ /, "", $6)
			print task, $2, $5, $6 }' "$f"
	done | sort -k1,1 -k2,2 | awk -v paper="$(paper)" '
		BEGIN {
			n = split(paper, lines, "\n")
			for (i = 1; i <= n; i++) { split(lines[i], p, " "); pz[p[2] " " p[1]] = p[3]; pf[p[2] " " p[1]] = p[4] }
		}
		function stat(s, ss, k) {
			if (k < 2) return sprintf("%.1f", s / k)
			return sprintf("%.1f ± %.1f", s / k, sqrt(max0((ss - s * s / k) / (k - 1))))
		}
		function max0(v) { return v < 0 ? 0 : v }
		{
			key = $1 " " $2
			if (!(key in k)) order[++m] = key
			k[key]++; z[key] += $3; zz[key] += $3 * $3
			if ($4 != "-") { fk[key]++; f[key] += $4; ff[key] += $4 * $4 }
		}
		END {
			for (i = 1; i <= m; i++) {
				key = order[i]; split(key, t, " ")
				few = fk[key] ? stat(f[key], ff[key], fk[key]) : "-"
				printf "| %s | %s | %d | %s | %s | %s | %s |\n", t[1], t[2], k[key], stat(z[key], zz[key], k[key]), few,
					(key in pz) ? pz[key] : "", (key in pf) ? pf[key] : ""
			}
		}'
}

if [ "${1:-}" = summary ]; then
	if [ $# -ne 2 ] || [ ! -d "$2" ]; then
		echo "usage: scripts/shi_table1.sh summary OUTDIR" >&2
		exit 2
	fi
	summary "$2"
	exit 0
fi
if [ $# -ne 1 ]; then
	echo "usage: scripts/shi_table1.sh OUTDIR   (or: scripts/shi_table1.sh summary OUTDIR)" >&2
	exit 2
fi
# OUTDIR and COMPBENCH are relative to where the script is called from; the
# script then works from the repository root.
mkdir -p "$1" || exit 1
OUT=$(cd "$1" && pwd)
BIN=${COMPBENCH:-}
[ -n "$BIN" ] && [ "${BIN#/}" = "$BIN" ] && BIN=$PWD/$BIN
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/gpu-kit/compbench}
if [ ! -x "$BIN" ] && [ -f "$BIN.gz" ]; then
	gzip -dc "$BIN.gz" >"$BIN" && chmod +x "$BIN"
fi
if [ ! -x "$BIN" ]; then
	echo "shi_table1: no compbench binary at $BIN; set COMPBENCH or build the kit (make gpu-kit)" >&2
	exit 2
fi
DEVICE=${DEVICE:-cuda}
if [ "${COMPBENCH_GEMM:-}" = cublas ]; then
	. scripts/cublas_path.sh
	dir=$(cublas_path "${PYTHON:-python3}")
	[ -n "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
TASKS=${TASKS:-length compose-different-concepts}
MODELS=${MODELS:-transformer relative relative-sep sep-full sep-to-sep-and-last sep-to-last}
SEEDS=${SEEDS:-1 2 3}
STEPS=${STEPS:-10000}
BATCH=${BATCH:-128}
TRAIN=${TRAIN:-$((STEPS * BATCH))}
TEST=${TEST:-10000}
BUDGET_S=${BUDGET_S:-540}
MIN_RUN_S=${MIN_RUN_S:-60}
SCRATCH=${SCRATCH:-${TMPDIR:-/tmp}}
T0=$SECONDS
done_runs=0 skipped=0 failed=0
for seed in $SEEDS; do
	for task in $TASKS; do
		for model in $MODELS; do
			res=$OUT/$task/seed$seed/$model
			if [ -f "$res.md" ]; then
				skipped=$((skipped + 1))
				continue
			fi
			left=$((BUDGET_S - (SECONDS - T0)))
			if [ "$left" -lt "$MIN_RUN_S" ]; then
				echo "shi_table1: budget spent ($done_runs runs done, $skipped already there); call again to go on"
				summary "$OUT"
				exit 0
			fi
			mkdir -p "$(dirname "$res")"
			work=$(mktemp -d "$SCRATCH/shi-table1.XXXXXX")
			echo "shi_table1: $task seed $seed $model ($left s left)"
			s=$SECONDS
			# shellcheck disable=SC2086 # EXTRA is a list of flags
			timeout -k 10 "$left" "$BIN" run --task "$task" --models "$model" --out "$work/run" --seed "$seed" \
				--device "$DEVICE" --steps "$STEPS" --batch "$BATCH" --lr 1e-3 --warmup 16000 \
				--layers 3 --heads 4 --dim 256 --mlp 512 --dropout 0.1 \
				--train-size "$TRAIN" --dev-size 1000 --test-size "$TEST" \
				--eval-every 1000 --eval-limit 500 --max-src 64 --max-tgt 160 \
				--finetune-steps 30 --finetune-lr 1e-4 ${EXTRA:-} >"$res.log" 2>&1
			rc=$?
			cp "$work/run/$model/metrics.jsonl" "$res.metrics.jsonl" 2>/dev/null
			if [ "$rc" -eq 0 ] && [ -f "$work/run/results.md" ]; then
				cp "$work/run/results.md" "$res.md.tmp" && mv "$res.md.tmp" "$res.md"
				done_runs=$((done_runs + 1))
				echo "  done in $((SECONDS - s)) s: $(grep "^| $model " "$res.md")"
			else
				failed=$((failed + 1))
				echo "  FAILED (exit $rc after $((SECONDS - s)) s); last lines of $res.log:"
				tail -3 "$res.log" | sed 's/^/    /'
			fi
			rm -rf "$work"
		done
	done
done
echo "shi_table1: every run tried ($done_runs done now, $skipped done before, $failed failed)"
summary "$OUT"
[ "$failed" -eq 0 ]
