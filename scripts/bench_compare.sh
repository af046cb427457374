#!/usr/bin/env bash
# bench_compare.sh REV: the must-not-regress benchmarks of BENCHMARKS.md
# ("One executor"), run for revision REV and for the working tree in one
# invocation on one machine, each revision with its own benchmark scripts:
#   - the paper-size Transformer training step and greedy decoding
#     (scripts/bench_transformer.sh), 1 and 2 threads, beside PyTorch;
#   - the lstm-attention training step (scripts/bench_lstm.sh), 1 and 2
#     threads, beside PyTorch;
#   - GPT-2 small scoring tokens/s and GPT-2 medium's peak memory
#     (scripts/bench_gpt2.sh);
#   - `predict` wall and CPU time, greedy and beam 4, of one checkpoint
#     (trained once by the working tree's binary, read by both).
# A step that fails stops the script with its command's output.
# Needs python3 with torch (make bench-deps). Example:
#   scripts/bench_compare.sh 7ac77eb 2>&1 | tee /tmp/compare.txt
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/bench_compare.sh REV}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/old" "$rev" >/dev/null
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== old: $rev ($(git -C "$tmp/old" log -1 --format=%s)); new: $(git rev-parse --short HEAD) + working tree"

for side in old new; do
	dir=.
	[ "$side" = old ] && dir=$tmp/old
	(cd "$dir" && go build -o "$tmp/compbench-$side" ./cmd/compbench)
done

# One checkpoint for the decoding comparison: the cpu-small Transformer on
# SCAN's simple (random) split of the original commands, trained by the new
# binary (both read its files); 512 test records decoded.
"$tmp/compbench-new" gen scan-original --out "$tmp/all.jsonl" >/dev/null 2>&1
"$tmp/compbench-new" split random --in "$tmp/all.jsonl" --out "$tmp/data" --test-frac 0.2 --dev-frac 0.05 --seed 1 >/dev/null 2>&1
head -n 512 "$tmp/data/test.jsonl" >"$tmp/data/test512.jsonl"
"$tmp/compbench-new" train --preset cpu-small --train "$tmp/data/train.jsonl" --out "$tmp/run" --steps 300 --max-src 16 --max-tgt 49 --seed 1 >/dev/null 2>&1
for beam in 1 4; do
	for side in old new; do
		/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$tmp/compbench-$side" predict --run "$tmp/run" --in "$tmp/data/test512.jsonl" \
			--out "$tmp/p-$side-$beam.jsonl" --beam "$beam" >/dev/null 2>&1
		read -r wall user sys <"$tmp/t"
		echo "predict beam $beam, 512 records, $side: wall $wall s, cpu $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}') s"
	done
	same='import json, sys
texts = [[(r["id"], r["prediction"]) for r in map(json.loads, open(p))] for p in sys.argv[1:]]
sys.exit(texts[0] != texts[1])'
	if python3 -c "$same" "$tmp/p-old-$beam.jsonl" "$tmp/p-new-$beam.jsonl"; then
		echo "predict beam $beam: identical predictions"
	else
		echo "predict beam $beam: predictions differ"
	fi
done

for threads in 1 2; do
	for side in old new; do
		dir=.
		[ "$side" = old ] && dir=$tmp/old
		echo "#### $side, $threads threads"
		(cd "$dir" && THREADS=$threads ./scripts/bench_transformer.sh && THREADS=$threads ./scripts/bench_lstm.sh) || echo "$side: benchmark failed"
	done
done
for side in old new; do
	dir=.
	[ "$side" = old ] && dir=$tmp/old
	echo "#### $side, GPT-2"
	(cd "$dir" && THREADS=2 ./scripts/bench_gpt2.sh) || echo "$side: GPT-2 benchmark failed"
done
