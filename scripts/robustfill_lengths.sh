#!/usr/bin/env bash
# robustfill_lengths.sh prints, for every RobustFill task, the length
# distribution of its train and test records in the model's tokens, as a
# markdown table (docs/robustfill.md, "Sequence lengths"):
#
#   source  the specification "in1 -> out1 | ... | in4 -> out4", one token
#           per whitespace-separated word, as train counts it against
#           --max-src (models.SourceTokens; no EOS)
#   target  the program's tokens with one SEP per part and EOS, as a
#           separator model counts it against --max-tgt (without separators
#           the parts' "|" and EOS: one token fewer)
#
# Percentiles are nearest-rank: p95 is the length that 95% of the records
# reach or stay under. The "> 128" and "> 192" columns are the share of
# sources longer than the earlier default --max-src and the earlier
# documented --max-src 192, which cut them.
#
#   COMPBENCH=bin/compbench  the binary
#   TRAIN=100000 TEST=1000   sizes (docs/robustfill.md's); SEED=1
#   TASKS="length ..."       the tasks (default: all eight)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${COMPBENCH:-bin/compbench}
TRAIN=${TRAIN:-100000}
TEST=${TEST:-1000}
SEED=${SEED:-1}
TASKS=${TASKS:-length length-hard length-hardest compose-different-concepts switch-concept-order compose-new-operation add-operation-functionality none}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

echo "| task | part | records | source min | median | p95 | p99 | max | > 128 | > 192 | target median | p99 | max |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for task in $TASKS; do
	"$bin" gen robustfill --task "$task" --train-size "$TRAIN" --dev-size 0 --test-size "$TEST" \
		--finetune-size 0 --seed "$SEED" --out "$d/$task" >/dev/null 2>&1 ||
		{ echo "robustfill_lengths: gen robustfill --task $task failed" >&2; exit 1; }
done
# One interpreter for every file: starting one can take a second.
# shellcheck disable=SC2086 # TASKS is a list of words
python3 - "$d" $TASKS <<'PY'
import json, math, os, sys
d, tasks = sys.argv[1], sys.argv[2:]
def q(xs, p):
    return xs[max(0, math.ceil(p * len(xs)) - 1)]
for task in tasks:
    for part in ("train", "test"):
        src, tgt = [], []
        with open(os.path.join(d, task, part + ".jsonl")) as f:
            for line in f:
                r = json.loads(line)
                src.append(len(r["input"].split()))
                parts = r.get("parts") or [r["output"]]
                tgt.append(sum(len(p.split()) for p in parts) + len(parts) + 1)
        src.sort()
        tgt.sort()
        over = lambda n: "%.0f%%" % (100 * sum(x > n for x in src) / len(src))
        s = [src[0], q(src, .5), q(src, .95), q(src, .99), src[-1], over(128), over(192)]
        t = [q(tgt, .5), q(tgt, .99), tgt[-1]]
        print("| `%s` | %s | %d | %s |" % (task, part, len(src), " | ".join(str(v) for v in s + t)))
PY
