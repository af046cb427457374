#!/usr/bin/env python3
"""One lstm-attention training step in PyTorch, the same model and shape as
compbench's BenchmarkLSTMTrainStep (models/lstm/lstm_bench_test.go) and, on
a GPU, BenchmarkGPULSTMTrainStep (engine): bidirectional 2-layer LSTM
encoder, 2-layer LSTM decoder, additive attention queried by the top
decoder state, output layer over [h; ctx], cross-entropy, Adam; batch 64,
source 16, target 24 tokens, hidden 256. Prints "pytorch ms/step X"
(median) and "pytorch tokens/s N ..." (batch x target tokens over the mean
step). --device, --tf32 and --autocast bf16 as in
scripts/bench_torch_common.py (on CUDA the LSTMs are cuDNN's)."""
import argparse
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_common import Bench, add_args  # noqa: E402


class LSTMAttention(nn.Module):
    def __init__(self, vs, vt, h, layers):
        super().__init__()
        self.src_emb = nn.Embedding(vs, h)
        self.tgt_emb = nn.Embedding(vt, h)
        self.enc = nn.LSTM(h, h, num_layers=layers, bidirectional=True, batch_first=True)
        self.dec = nn.LSTM(h, h, num_layers=layers, batch_first=True)
        self.wq = nn.Linear(h, h, bias=False)
        self.wk = nn.Linear(2 * h, h, bias=False)
        self.b = nn.Parameter(torch.zeros(h))
        self.v = nn.Parameter(torch.randn(h) * 0.1)
        self.out = nn.Linear(3 * h, vt)

    def forward(self, src, dec_in, tgt):
        mem, _ = self.enc(self.src_emb(src))  # [B, S, 2H]
        hd, _ = self.dec(self.tgt_emb(dec_in))  # [B, T, H]
        u = torch.tanh(self.wq(hd)[:, :, None, :] + self.wk(mem)[:, None, :, :] + self.b)  # [B, T, S, H]
        a = torch.softmax(u @ self.v, dim=-1)  # [B, T, S]
        ctx = a @ mem  # [B, T, 2H]
        logits = self.out(torch.cat([hd, ctx], dim=-1))  # [B, T, V]
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--src", type=int, default=16)
    ap.add_argument("--tgt", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--src-vocab", type=int, default=24)
    ap.add_argument("--tgt-vocab", type=int, default=12)
    ap.add_argument("--steps", type=int, default=10)
    add_args(ap)
    a = ap.parse_args()
    bench = Bench(a)
    torch.manual_seed(1)
    m = LSTMAttention(a.src_vocab, a.tgt_vocab, a.hidden, a.layers).to(bench.device)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    src = torch.randint(4, a.src_vocab, (a.batch, a.src))
    tgt = torch.randint(4, a.tgt_vocab, (a.batch, a.tgt))
    dec_in = torch.cat([torch.ones(a.batch, 1, dtype=torch.long), tgt[:, :-1]], dim=1)
    src, tgt, dec_in = src.to(bench.device), tgt.to(bench.device), dec_in.to(bench.device)

    def step():
        opt.zero_grad()
        with bench.autocast():
            loss = m(src, dec_in, tgt)
        loss.backward()
        opt.step()

    bench.report(bench.time(step, a.steps, warmup=2), a.batch * a.tgt, "training step")


if __name__ == "__main__":
    main()
