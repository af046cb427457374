#!/usr/bin/env python3
"""jsonl_compare.py [--max-rel R] WANT GOT: two JSONL outputs of one command
(predict's predictions, score's scores) record by record, as
scripts/gpu_session.sh compares a GPU's output with the CPU's: the same ids
in the same order, every number within R relative (default 1e-3; of
max(1, |value|)), and strings counted where they differ. A decoding may pick
another of two hypotheses whose scores tie within rounding, so a differing
prediction is reported, and fails only when its score differs too. Exits 1
on a count or id mismatch or a number out of tolerance; a missing file is
reported, not judged (the run that should have written it failed)."""
import json, os, sys

args = sys.argv[1:]
max_rel = 1e-3
if args[:1] == ["--max-rel"]:
    max_rel, args = float(args[1]), args[2:]
missing = [p for p in args if not os.path.exists(p)]
if missing:
    # The run that should have written it failed, and says so itself.
    print(f"  no {' or '.join(missing)}: nothing to compare (see the runs' logs)")
    sys.exit(0)
want, got = ([json.loads(l) for l in open(p) if l.strip()] for p in args)
print(f"  {len(want)} records on the CPU, {len(got)} on the GPU")
if len(want) != len(got):
    sys.exit(1)
bad, texts, worst = 0, 0, 0.0


def walk(w, g):
    """Compares w and g, counting strings that differ; returns the
    numbers out of tolerance."""
    global texts, worst
    if isinstance(w, bool) or isinstance(w, str) or w is None:
        if w != g:
            texts += 1
        return 0
    if isinstance(w, (int, float)):
        if not isinstance(g, (int, float)):
            return 1
        d = abs(w - g) / max(1.0, abs(w))
        worst = max(worst, d)
        return int(d > max_rel)
    if isinstance(w, list):
        if not isinstance(g, list) or len(w) != len(g):
            texts += 1
            return 0
        return sum(walk(a, b) for a, b in zip(w, g))
    if isinstance(w, dict):
        if not isinstance(g, dict) or w.keys() != g.keys():
            return 1
        return sum(walk(w[k], g[k]) for k in w)
    return int(w != g)


for i, (w, g) in enumerate(zip(want, got)):
    if w.get("id") != g.get("id"):
        print(f"  record {i + 1}: id {w.get('id')!r} on the CPU, {g.get('id')!r} on the GPU")
        sys.exit(1)
    n = walk(w, g)
    if n and bad < 5:
        print(f"  record {w.get('id')!r}: cpu {json.dumps(w)[:200]}\n  {'':{len(str(w.get('id'))) + 10}}gpu {json.dumps(g)[:200]}")
    bad += n > 0
print(f"  largest relative difference of a number {worst:.2e} (tolerance {max_rel:.0e}); "
      f"{texts} strings differ; {bad} records out of tolerance")
sys.exit(1 if bad else 0)
