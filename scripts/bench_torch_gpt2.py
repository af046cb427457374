#!/usr/bin/env python3
"""GPT-2 scoring in PyTorch, the PyTorch side of compbench's
BenchmarkGPT2Score (models/gpt2) and, on a GPU, BenchmarkGPUGPT2Score
(engine): the log-probability of every token of random batches of 32
sequences of 32 tokens, with gpt2_reference.py's model on the weights of
DIR (gpt2_reference.py random-checkpoint DIR --size small writes random
GPT-2 small ones), in inference mode.

  bench_torch_gpt2.py DIR [--batch B --seq T --batches N] [--device D --tf32 on --autocast bf16]

Prints "pytorch ms/step X" (the median batch) and "pytorch tokens/s N ..."
(every token of a batch over the mean batch). --device, --tf32 and
--autocast bf16 as in scripts/bench_torch_common.py."""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_common import Bench, add_args  # noqa: E402
from gpt2_reference import load_safetensors, log_probs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--batches", type=int, default=10)
    add_args(ap)
    a = ap.parse_args()
    bench = Bench(a)
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    cfg.setdefault("layer_norm_epsilon", 1e-5)
    w = {k: v.float().to(bench.device) for k, v in load_safetensors(os.path.join(a.dir, "model.safetensors")).items()}
    gen = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, cfg["vocab_size"], (a.batch, a.seq), generator=gen).to(bench.device)
               for _ in range(a.batches + 1)]
    mask = torch.ones(a.batch, a.seq, dtype=torch.long, device=bench.device)
    nxt = iter(batches)

    def step():
        with torch.inference_mode(), bench.autocast():
            log_probs(w, cfg, next(nxt), mask)

    bench.report(bench.time(step, a.batches), a.batch * a.seq, "batch")


if __name__ == "__main__":
    main()
