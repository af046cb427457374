#!/usr/bin/env bash
# covr_easiness.sh GRAMMAR OUTDIR: Bogin et al.'s instance-difficulty
# experiment (§5.1-§5.3; Table 3's decision rules, Table 5's split-level
# correlation and Table 6's LSTM row) on COVR grammar splits, at a size a
# CPU finishes in about an hour. The training is the sweep file SWEEP
# (experiments/bogin-covr.json) run by compbench sweep; this script makes
# its data and analyses its predictions:
#
#  1. Sample a pool of POOL distinct COVR examples from GRAMMAR (the COVR
#     grammar file) and list the grammar-split candidates (App. B.2).
#  2. Take SPLITS valid candidates, evenly spaced through the list, among
#     those with enough train and test examples; for each, draw TRAIN train,
#     DEV dev and TEST test examples at random (the paper: 3,000 and 500)
#     into OUTDIR/s<index>.
#  3. compbench sweep --file SWEEP --local over those folders: SWEEP's one
#     dataset glob is pointed at OUTDIR/s<index> (OUTDIR/covr-sweep.json), and
#     each of its models and seeds trains, predicts the test examples and
#     is evaluated in OUTDIR/sweep/cells/<data>.<model>.seed<N>; then
#     compbench report OUTDIR/sweep. Per split, every easiness rule and
#     the first-error share.
#  4. Over all splits together (ids prefixed with the split's index): each
#     predictor's (model and seed's) exact match, their agreement (two or
#     more) and the AUC of each rule against the majority (§5.1; ties
#     dropped); across splits: Pearson correlation of the mean 2-LS
#     easiness and of the compound divergence with mean exact match.
#
# Resumable: every step whose output exists is skipped and the sweep skips
# finished cells, so calling it again with the same OUTDIR goes on where the
# last call stopped. OUTDIR/summary.md gets the tables.
#
#   COMPBENCH=bin/compbench  POOL=20000  SPLITS=10  TRAIN=3000  DEV=300  TEST=500
#   SEED=1 (pool, splits and draws; model seeds are SWEEP's)
#   SWEEP=experiments/bogin-covr.json  the models, their settings and seeds
#   JOBS=1  cells trained at once
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
SEED=${SEED:-1}
SWEEP=${SWEEP:-experiments/bogin-covr.json}
JOBS=${JOBS:-1}

[ -f "$grammar" ] || { echo "covr_easiness: no grammar file $grammar" >&2; exit 2; }
[ -x "$B" ] || { echo "covr_easiness: no compbench binary at $B (run make build or set COMPBENCH)" >&2; exit 2; }
[ -f "$SWEEP" ] || { echo "covr_easiness: no sweep file $SWEEP" >&2; exit 2; }
[ "$(grep -c '"glob"' "$SWEEP")" -eq 1 ] || { echo "covr_easiness: $SWEEP needs exactly one dataset glob (as experiments/bogin-covr.json)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

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

for k in "${picked[@]}"; do
	d=$out/s$k
	done_ "$d/split/test.jsonl" || "$B" split grammar --in "$pool" --grammar "$grammar" --index "$k" --dev-frac 0.05 --seed "$SEED" --out "$d/split" >/dev/null
	cp "$d/split/split.json" "$d/split.json"
	for f in train:$TRAIN dev:$DEV test:$TEST; do
		name=${f%%:*}
		done_ "$d/$name.jsonl" || "$B" select --pool "$d/split/$name.jsonl" --budget "${f#*:}" --strategy random --seed "$SEED" --out "$d/$name.jsonl" >/dev/null
	done
done

# The sweep over exactly the picked splits: its glob matches OUTDIR/s<k>.
for d in "$out"/s[0-9]*/; do
	k=${d%/}
	k=${k##*/s}
	[[ " ${picked[*]} " == *" $k "* ]] || { echo "covr_easiness: $d is not one of the picked splits (${picked[*]}); use a new OUTDIR" >&2; exit 1; }
done
# A relative "pretrained" folder (a t5 or bart model) stays relative to SWEEP's folder.
sweepdir=$(cd "$(dirname "$SWEEP")" && pwd)
sed -e "s#\"glob\": *\"[^\"]*\"#\"glob\": \"$out/s[0-9]*\"#" \
	-e "s#\"pretrained\": *\"\([^/\"][^\"]*\)\"#\"pretrained\": \"$sweepdir/\1\"#" "$SWEEP" >"$out/covr-sweep.json"
"$B" sweep --file "$out/covr-sweep.json" --out "$out/sweep" --local --jobs "$JOBS"
"$B" report "$out/sweep" >"$out/report.md"

# The predictors: each model and seed of the sweep, by its cells' names
# (<prefix>s<k>.<model>.seed<N>).
first=$(ls -d "$out"/sweep/cells/*s"${picked[0]}".*/ | sort)
preds_of() { for c in $first; do c=${c%/}; c=${c##*/}; echo "${c#*.}"; done; }
mapfile -t models < <(preds_of)
cell() { ls -d "$out"/sweep/cells/*s"$1"."$2"; }
echo "covr_easiness: predictors ${models[*]}"

rules=("full 2" "full 3" "full 4" "nosib 2" "nopc 2" "nosim 2" "bigram 2" "length 2" "random 2")
for k in "${picked[@]}"; do
	d=$out/s$k
	preds=()
	for m in "${models[@]}"; do
		cp "$(cell "$k" "$m")/test.preds.jsonl" "$d/pred-$m.jsonl"
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
	echo "Splits ${picked[*]} of $out/candidates.txt; $TRAIN train, $DEV dev, $TEST test examples each; models and training: $SWEEP (OUTDIR/covr-sweep.json); per-cell table: report.md."
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
