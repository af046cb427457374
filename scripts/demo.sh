#!/usr/bin/env bash
# The compbench demo: the phenomenon the papers start from, in minutes on a
# laptop. One pool (all 20,910 commands of the original SCAN grammar) is
# split twice with the same sizes (Keysers et al.: 40% train, 5% dev, 5%
# test): at random, and by maximum compound divergence (MCD). The same small
# model is trained on both; it masters the random split and fails the MCD
# split, whose test set recombines familiar words into unfamiliar compounds.
# Local-structure easiness (Bogin et al.) then says which test examples were
# hard. Run it with "make demo", which builds bin/compbench first.
#
# Environment (defaults in brackets):
#   COMPBENCH   the binary [bin/compbench]
#   DEMO_DIR    where everything is written [a new temporary folder]
#   DEMO_STEPS  training steps per model [3500]
#   DEMO_EVERY  keep every K-th pool command, for a quick check [1: all]
#   DEMO_SEED   the models' seed; the splits always use seed 1 [1]
#   DEMO_MODEL  training flags of the model
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${COMPBENCH:-bin/compbench}
if [ ! -x "$BIN" ]; then
	echo "demo: $BIN not found; run 'make demo' (it builds the binary first)" >&2
	exit 1
fi
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
STEPS=${DEMO_STEPS:-3500}
EVERY=${DEMO_EVERY:-1}
SEED=${DEMO_SEED:-1}
# train's cpu-small preset for lstm-attention (Keysers et al.'s LSTM
# baseline): one layer of width 64 at a rate of 0.01, here decayed linearly
# to 0 over the 3,500 steps (--schedule polynomial), about 2-3 minutes on 2
# CPU cores. At the preset's constant rate the last checkpoint's exact match
# on the random split swings with the seed (91.5% and 85.7% for seeds 1
# and 2); decayed, seed 2 reaches 98.9% (RESULTS.md, "The demo").
MODEL=${DEMO_MODEL:---model lstm-attention --preset cpu-small --schedule polynomial --max-src 16 --max-tgt 49}
work=${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/compbench-demo.XXXXXX")}
mkdir -p "$work"
cd "$work"
start=$(date +%s)
say() { printf '\n== %s (%ds)\n' "$*" "$(($(date +%s) - start))"; }
# field NAME FILE: a number from compbench's JSON output or split.json.
field() { grep -o "\"$1\": *[-0-9.e]*" "$2" | head -n 1 | sed 's/.*: *//'; }
pct() { awk -v x="$1" 'BEGIN { printf "%.1f%%", 100 * x }'; }

say "demo folder: $work"
"$BIN" gen scan-original --out all.jsonl
if [ "$EVERY" -gt 1 ]; then
	awk -v k="$EVERY" 'NR % k == 1' all.jsonl >pool.jsonl
else
	mv all.jsonl pool.jsonl
fi
echo "pool: $(wc -l <pool.jsonl) SCAN commands"

say "two splits of the same pool, same sizes"
"$BIN" split random --in pool.jsonl --out random --seed 1 --train-frac 0.4 --dev-frac 0.05 --test-frac 0.05 >/dev/null
# Test outputs 1.32-1.59 times as long as train's, the band of Keysers et
# al.'s own SCAN MCD splits (docs/splits.md).
"$BIN" split mcd --in pool.jsonl --out mcd --seed 1 --min-length-ratio 1.32 --max-length-ratio 1.59 >/dev/null 2>mcd.log || { cat mcd.log; exit 1; }
for s in random mcd; do
	printf '%-7s atom divergence %.3f, compound divergence %.3f\n' "$s" \
		"$(field atom_divergence $s/split.json)" "$(field compound_divergence $s/split.json)"
done

for s in random mcd; do
	say "train on the $s split ($STEPS steps)"
	# shellcheck disable=SC2086 # MODEL is a list of flags
	"$BIN" train $MODEL --train $s/train.jsonl --dev $s/dev.jsonl --out run-$s \
		--steps "$STEPS" --eval-every "$STEPS" --eval-limit 200 --seed "$SEED"
	"$BIN" predict --run run-$s --last --in $s/test.jsonl --out $s/preds.jsonl
	"$BIN" eval --gold $s/test.jsonl --pred $s/preds.jsonl --json >$s/eval.json
	"$BIN" easiness --train $s/train.jsonl --test $s/test.jsonl --out $s/easiness.jsonl --json >$s/easiness.json
	# AUC is undefined when the model gets every test example right, or
	# every one wrong.
	"$BIN" auc --easiness $s/easiness.jsonl --gold $s/test.jsonl --pred $s/preds.jsonl --json >$s/auc.json 2>$s/auc.err ||
		echo '{"auc": "n/a"}' >$s/auc.json
done

say "results"
{
	echo "| split | atom div. | compound div. | test exact match | test examples with an unobserved 2-LS | AUC of easiness |"
	echo "|---|---|---|---|---|---|"
	for s in random mcd; do
		n=$(field examples $s/easiness.json)
		auc=$(field auc $s/auc.json)
		[ -n "$auc" ] && auc=$(printf '%.2f' "$auc") || auc="n/a (all right or all wrong)"
		printf '| %s | %.3f | %.3f | %s | %s of %s | %s |\n' "$s" \
			"$(field atom_divergence $s/split.json)" "$(field compound_divergence $s/split.json)" \
			"$(pct "$(field accuracy $s/eval.json)")" "$(field with_unobserved $s/easiness.json)" "$n" "$auc"
	done
} | tee results.md
cat <<'EOF'

Same words, same sizes, same model: the random test set repeats the
compounds of training and the model masters it; the MCD test set recombines
them (high compound divergence at near-zero atom divergence) and exact match
collapses. Easiness (Bogin et al.) scores each test example by its local
structures (pairs of grammar rules) never seen in training; its AUC says how
well that ranks the model's correct answers above its errors (0.5: chance).
On the random split every structure is observed, so easiness is 1 everywhere
and its AUC is 0.5 by construction.
EOF
# The verdict follows the number printed above, not a recorded one.
auc=$(field auc mcd/auc.json)
if [ -n "$auc" ]; then
	awk -v a="$auc" 'BEGIN {
		if (a >= 0.7) v = "explains the MCD errors well: the test examples with unobserved 2-LSs are mostly the ones the model gets wrong"
		else if (a > 0.6) v = "explains part of the MCD errors: it ranks right answers above wrong ones more often than chance, far from always"
		else v = "does not explain the MCD errors: its ranking is near chance"
		printf "On this MCD split (AUC %.2f), 2-LS easiness %s.\n", a, v }'
else
	echo "On this MCD split the model got every test example right or every one wrong, so no AUC can be drawn."
fi
say "done; every file is in $work (results.md holds the table)"
