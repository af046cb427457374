#!/usr/bin/env python3
"""loss_compare.py CPU_RUN NAME=RUN...: the training metrics (loss,
grad_norm, dev_loss) of runs of the same seed side by side with the CPU
run's, with each run's largest relative difference (scripts/gpu_session.sh)."""
import json, os, sys

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

cpu = rows(sys.argv[1])
runs = [(a.split("=", 1)[0], rows(a.split("=", 1)[1])) for a in sys.argv[2:]]
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
for n, r in runs:
    if r is None:
        print(f"  {n}: no metrics (the run failed; see its log)")
        continue
    if not worst[n]:
        print(f"  {n}: no logged step in common with the CPU run (see its log)")
        continue
    print(f"  max relative difference, {n} vs cpu: " + ", ".join(f"{k} {v:.2e}" for k, v in sorted(worst[n].items())))
