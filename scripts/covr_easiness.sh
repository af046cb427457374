#!/usr/bin/env bash
# covr_easiness.sh GRAMMAR OUTDIR: Bogin et al.'s instance-difficulty
# experiment (§5.1-§5.3; Table 3's decision rules, Table 5's split-level
# correlation and Table 6's LSTM row) on COVR grammar splits, at a size a
# CPU finishes in about an hour.
#
#  1. Sample a pool of POOL distinct COVR examples from GRAMMAR (the COVR
#     grammar file) and list the grammar-split candidates (App. B.2).
#  2. Take SPLITS valid candidates, evenly spaced through the list, among
#     those with enough train and test examples; for each, draw TRAIN train,
#     DEV dev and TEST test examples at random (the paper: 3,000 and 500).
#  3. Per split: train each of MODELS, predict the test examples (greedy,
#     best dev checkpoint), compute every easiness rule and the first-error
#     share.
#  4. Over all splits together (ids prefixed with the split's index): each
#     model's exact match, their agreement (two or more models) and the AUC
#     of each rule against the models' majority (§5.1; ties dropped);
#     across splits: Pearson correlation of the mean 2-LS easiness and of
#     the compound divergence with mean exact match.
#
# Resumable: every step whose output exists is skipped, so calling it again
# with the same OUTDIR goes on where the last call stopped. OUTDIR/summary.md
# gets the tables.
#
#   COMPBENCH=bin/compbench  POOL=20000  SPLITS=10  TRAIN=3000  DEV=300  TEST=500
#   STEPS=1000  SEED=1 (pool, splits, draws and training)
#   MODELS="lstm-copy"  any of compbench train's models; each trains in
#                       s*/run-MODEL and predicts into s*/pred-MODEL.jsonl
#   LSTM_FLAGS="--dim 256 --layers 1 --dropout 0.1 --batch 64 --lr 0.001"
#   TRANSFORMER_FLAGS="--dim 128 --layers 2 --heads 4 --mlp 256 --dropout 0.1
#                      --batch 64 --lr 0.001 --warmup 200 --steps 2000
#                      --eval-every 500"  (the other models)
#   The model flags come last, so they override STEPS: at 1,000 steps this
#   Transformer reaches only about 80% dev exact match.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: scripts/covr_easiness.sh GRAMMAR OUTDIR" >&2
	exit 2
fi
grammar=$1
out=$2
B=${COMPBENCH:-bin/compbench}
POOL=${POOL:-20000}
SPLITS=${SPLITS:-10}
TRAIN=${TRAIN:-3000}
DEV=${DEV:-300}
TEST=${TEST:-500}
STEPS=${STEPS:-1000}
SEED=${SEED:-1}
read -r -a models <<<"${MODELS:-lstm-copy}"
LSTM_FLAGS=${LSTM_FLAGS:---dim 256 --layers 1 --dropout 0.1 --batch 64 --lr 0.001}
TRANSFORMER_FLAGS=${TRANSFORMER_FLAGS:---dim 128 --layers 2 --heads 4 --mlp 256 --dropout 0.1 --batch 64 --lr 0.001 --warmup 200 --steps 2000 --eval-every 500}
flags_of() { case $1 in lstm-*) echo "$LSTM_FLAGS" ;; *) echo "$TRANSFORMER_FLAGS" ;; esac; }

[ -f "$grammar" ] || { echo "covr_easiness: no grammar file $grammar" >&2; exit 2; }
[ -x "$B" ] || { echo "covr_easiness: no compbench binary at $B (run make build or set COMPBENCH)" >&2; exit 2; }
mkdir -p "$out"

# done FILE: true when a step's output is already there.
done_() { [ -s "$1" ]; }

pool=$out/covr.jsonl
done_ "$pool" || "$B" gen scfg --grammar "$grammar" --n "$POOL" --max-depth 12 --dedupe --seed "$SEED" --out "$pool"
done_ "$out/candidates.txt" || "$B" split grammar --in "$pool" --grammar "$grammar" --list >"$out/candidates.txt"

# Candidates big enough after the 5% dev carve-out: columns are index,
# valid, train, dev, test.
need_train=$(((TRAIN > DEV * 19 ? TRAIN : DEV * 19) * 100 / 95 + 1))
mapfile -t ok < <(awk -v tr="$need_train" -v te="$TEST" 'NR > 1 && $2 == "yes" && $3 >= tr && $5 >= te {print $1}' "$out/candidates.txt")
if [ "${#ok[@]}" -lt "$SPLITS" ]; then
	echo "covr_easiness: only ${#ok[@]} candidates have $need_train train and $TEST test examples; lower SPLITS or the sizes" >&2
	exit 1
fi
picked=()
for ((i = 0; i < SPLITS; i++)); do
	picked+=("${ok[$(((2 * i + 1) * ${#ok[@]} / (2 * SPLITS)))]}")
done
echo "covr_easiness: ${#ok[@]} candidates qualify; splits ${picked[*]}"

rules=("full 2" "full 3" "full 4" "nosib 2" "nopc 2" "nosim 2" "bigram 2" "length 2" "random 2")
for k in "${picked[@]}"; do
	d=$out/s$k
	done_ "$d/split/test.jsonl" || "$B" split grammar --in "$pool" --grammar "$grammar" --index "$k" --dev-frac 0.05 --seed "$SEED" --out "$d/split" >/dev/null
	cp "$d/split/split.json" "$d/split.json"
	for f in train:$TRAIN dev:$DEV test:$TEST; do
		name=${f%%:*}
		done_ "$d/$name.jsonl" || "$B" select --pool "$d/split/$name.jsonl" --budget "${f#*:}" --strategy random --seed "$SEED" --out "$d/$name.jsonl" >/dev/null
	done
	preds=()
	for m in "${models[@]}"; do
		if ! done_ "$d/run-$m/best.safetensors"; then
			# shellcheck disable=SC2046 # the flags are a list
			"$B" train --model "$m" --train "$d/train.jsonl" --dev "$d/dev.jsonl" --out "$d/run-$m" --force \
				--steps "$STEPS" --eval-every $((STEPS / 4)) --eval-limit "$DEV" --seed "$SEED" $(flags_of "$m") >"$d/train-$m.log" 2>&1
		fi
		done_ "$d/pred-$m.jsonl" || "$B" predict --run "$d/run-$m" --in "$d/test.jsonl" --out "$d/pred-$m.jsonl" 2>>"$d/train-$m.log"
		preds+=(--pred "$d/pred-$m.jsonl")
		echo "covr_easiness: split $k, $m: $("$B" eval --gold "$d/test.jsonl" --pred "$d/pred-$m.jsonl" --json | tr -d '\n ' | head -c 200)"
	done
	for r in "${rules[@]}"; do
		set -- $r
		done_ "$d/easiness-$1-$2.jsonl" || "$B" easiness --train "$d/train.jsonl" --test "$d/test.jsonl" --tree bracketed \
			--variant "$1" --n "$2" --seed "$SEED" --out "$d/easiness-$1-$2.jsonl" >/dev/null
	done
	cp "$d/easiness-full-2.jsonl" "$d/easiness.jsonl"
	"$B" first-error --train "$d/train.jsonl" --gold "$d/test.jsonl" "${preds[@]}" --tree bracketed --json >"$d/first-error.json"
done

# All test instances together, ids made unique by the split's index.
all=$out/all
mkdir -p "$all"
prefix() { sed "s/^{\"id\":\"/{\"id\":\"s$2:/" "$1"; }
: >"$all/test.jsonl"
allpreds=()
for m in "${models[@]}"; do
	: >"$all/pred-$m.jsonl"
	allpreds+=(--pred "$all/pred-$m.jsonl")
done
for k in "${picked[@]}"; do
	prefix "$out/s$k/test.jsonl" "$k" >>"$all/test.jsonl"
	for m in "${models[@]}"; do prefix "$out/s$k/pred-$m.jsonl" "$k" >>"$all/pred-$m.jsonl"; done
done
{
	echo "# COVR grammar splits: ${models[*]}, $SPLITS splits, seed $SEED"
	echo
	echo "Splits ${picked[*]} of $out/candidates.txt; $TRAIN train, $DEV dev, $TEST test examples each; $STEPS steps."
	for m in "${models[@]}"; do echo "$m: $(flags_of "$m")"; done
	echo
	echo '```'
	for m in "${models[@]}"; do
		echo "$m:"
		"$B" eval --gold "$all/test.jsonl" --pred "$all/pred-$m.jsonl"
	done
	[ "${#models[@]}" -lt 2 ] || "$B" agree --gold "$all/test.jsonl" "${allpreds[@]}"
	echo
	for r in "${rules[@]}"; do
		set -- $r
		: >"$all/easiness-$1-$2.jsonl"
		for k in "${picked[@]}"; do
			prefix "$out/s$k/easiness-$1-$2.jsonl" "$k" >>"$all/easiness-$1-$2.jsonl"
		done
		echo "rule $1, n=$2:"
		# An AUC needs right and wrong predictions, a correlation some
		# spread: say so in the summary rather than stop.
		"$B" auc --easiness "$all/easiness-$1-$2.jsonl" --gold "$all/test.jsonl" "${allpreds[@]}" 2>&1 || true
	done
	echo
	dirs=()
	for k in "${picked[@]}"; do dirs+=(--split "$out/s$k"); done
	names=()
	for m in "${models[@]}"; do names+=(--pred "pred-$m.jsonl"); done
	"$B" correlate "${dirs[@]}" "${names[@]}" --x easiness 2>&1 || true
	"$B" correlate "${dirs[@]}" "${names[@]}" --x divergence 2>&1 || true
	echo
	for k in "${picked[@]}"; do echo "split $k first-error: $(tr -d '\n ' <"$out/s$k/first-error.json")"; done
	echo '```'
} >"$out/summary.md"
cat "$out/summary.md"
