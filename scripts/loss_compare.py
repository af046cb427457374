#!/usr/bin/env python3
"""loss_compare.py [--max-rel R] CPU_RUN NAME=RUN...: the training metrics
(loss, grad_norm, dev_loss) of runs of the same seed side by side with the
CPU run's, with each run's largest relative difference
(scripts/gpu_session.sh). With --max-rel, exits 1 when a run's loss or
dev_loss differs from the CPU's by more than R anywhere (the gradient norm,
which swings more with rounding, is shown but not judged). A run without
metrics is reported, not judged: its own step failed."""
import json, os, sys

JUDGED = ("loss", "dev_loss")


def rows(run):
    out = {}
    path = os.path.join(run, "metrics.jsonl")
    if not os.path.exists(path):
        return None
    for line in open(path):
        r = json.loads(line)
        for k in ("loss", "grad_norm", "dev_loss"):
            if k in r:
                out[(r["step"], k)] = r[k]
    return out


args = sys.argv[1:]
max_rel = None
if args[:1] == ["--max-rel"]:
    max_rel, args = float(args[1]), args[2:]
cpu = rows(args[0])
runs = [(a.split("=", 1)[0], rows(a.split("=", 1)[1])) for a in args[1:]]
if cpu is None:
    print("  no CPU metrics: nothing to compare")
    sys.exit(0)
names = [n for n, r in runs if r is not None]
print("  %6s %-9s %12s" % ("step", "metric", "cpu") + "".join(" %12s %9s" % (n, "rel diff") for n in names))
worst = {n: {} for n in names}
for key in sorted(cpu):
    line = "  %6d %-9s %12.6f" % (key[0], key[1], cpu[key])
    for n, r in runs:
        if r is None:
            continue
        if key not in r:
            line += " %12s %9s" % ("-", "-")
            continue
        d = abs(r[key] - cpu[key]) / max(abs(cpu[key]), 1e-12)
        worst[n][key[1]] = max(worst[n].get(key[1], 0.0), d)
        line += " %12.6f %9.2e" % (r[key], d)
    print(line)
bad = []
for n, r in runs:
    if r is None:
        print(f"  {n}: no metrics (the run failed; see its log)")
        continue
    if not worst[n]:
        print(f"  {n}: no logged step in common with the CPU run (see its log)")
        continue
    print(f"  max relative difference, {n} vs cpu: " + ", ".join(f"{k} {v:.2e}" for k, v in sorted(worst[n].items())))
    if max_rel is not None and any(worst[n].get(k, 0.0) > max_rel for k in JUDGED):
        bad.append(n)
if max_rel is not None:
    print(f"  judged: {', '.join(JUDGED)} within {max_rel:.0e} of the CPU run: "
          + ("all runs" if not bad else "NOT " + ", ".join(bad)))
sys.exit(1 if bad else 0)
