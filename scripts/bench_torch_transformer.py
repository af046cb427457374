#!/usr/bin/env python3
"""One Transformer training step in PyTorch, the same model and shape as
compbench's BenchmarkTransformerTrainStep (train/bench_test.go) and, on a
GPU, BenchmarkGPUTrainStep (engine): encoder-decoder, 3+3 layers, 4 heads,
d 256, feed-forward 512, dropout 0.1, LayerNorm before each sublayer,
sinusoidal positions, batch 64, source 16, target 48 tokens,
label-smoothed cross-entropy, global-norm clipping, Adam (0.9, 0.98, 1e-9).
Prints "pytorch ms/step X" (median) and "pytorch tokens/s N ..." over the
mean step, counting batch x target tokens as compbench's benchmarks count
Batch.Tokens (no padding here). --device, --tf32 and --autocast bf16 as in
scripts/bench_torch_common.py. With --universal N, the Universal
Transformer of BenchmarkUniversalTrainStep instead: one encoder and one
decoder layer of that size applied N times with shared weights, sinusoidal
positions and a learned step embedding added before every step, a final
LayerNorm per stack."""
import argparse
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_common import Bench, add_args  # noqa: E402


def sinusoid(t, d):
    pos = torch.arange(t)[:, None]
    i = torch.arange(0, d, 2)[None, :]
    a = pos / torch.pow(10000, i / d)
    pe = torch.zeros(t, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe


class Seq2Seq(nn.Module):
    def __init__(self, v, d, heads, layers, mlp, dropout):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(v, d), nn.Embedding(v, d)
        self.tf = nn.Transformer(d, heads, layers, layers, mlp, dropout, batch_first=True, norm_first=True)
        self.out = nn.Linear(d, v)
        self.drop = nn.Dropout(dropout)

    def forward(self, src, dec_in, tgt):
        s, t = src.shape[1], dec_in.shape[1]
        dev = src.device
        x = self.drop(self.src_emb(src) + sinusoid(s, self.out.in_features).to(dev))
        y = self.drop(self.tgt_emb(dec_in) + sinusoid(t, self.out.in_features).to(dev))
        causal = self.tf.generate_square_subsequent_mask(t).to(dev)
        h = self.tf(x, y, tgt_mask=causal, src_key_padding_mask=src == 0,
                    tgt_key_padding_mask=dec_in == 0, memory_key_padding_mask=src == 0)
        logits = self.out(h)
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                                           ignore_index=0, label_smoothing=0.1)


class Universal(nn.Module):
    def __init__(self, v, d, heads, steps, mlp, dropout):
        super().__init__()
        self.src_emb, self.tgt_emb = nn.Embedding(v, d), nn.Embedding(v, d)
        self.enc = nn.TransformerEncoderLayer(d, heads, mlp, dropout, batch_first=True, norm_first=True)
        self.dec = nn.TransformerDecoderLayer(d, heads, mlp, dropout, batch_first=True, norm_first=True)
        self.enc_norm, self.dec_norm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.enc_step = nn.Parameter(torch.randn(steps, d))
        self.dec_step = nn.Parameter(torch.randn(steps, d))
        self.out = nn.Linear(d, v)
        self.drop = nn.Dropout(dropout)
        self.steps, self.d = steps, d

    def forward(self, src, dec_in, tgt):
        s, t = src.shape[1], dec_in.shape[1]
        dev = src.device
        ps, pt = sinusoid(s, self.d).to(dev), sinusoid(t, self.d).to(dev)
        causal = nn.Transformer.generate_square_subsequent_mask(t).to(dev)
        x = self.drop(self.src_emb(src))
        for k in range(self.steps):
            x = self.enc(x + ps + self.enc_step[k], src_key_padding_mask=src == 0)
        mem = self.enc_norm(x)
        y = self.drop(self.tgt_emb(dec_in))
        for k in range(self.steps):
            y = self.dec(y + pt + self.dec_step[k], mem, tgt_mask=causal, tgt_key_padding_mask=dec_in == 0,
                         memory_key_padding_mask=src == 0)
        logits = self.out(self.dec_norm(y))
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                                           ignore_index=0, label_smoothing=0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--src", type=int, default=16)
    ap.add_argument("--tgt", type=int, default=48)
    ap.add_argument("--vocab", type=int, default=24)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--universal", type=int, default=0, help="steps of a Universal Transformer (0: the Transformer)")
    add_args(ap)
    a = ap.parse_args()
    bench = Bench(a)
    dev = bench.device
    torch.manual_seed(1)
    if a.universal:
        m = Universal(a.vocab, 256, 4, a.universal, 512, 0.1)
    else:
        m = Seq2Seq(a.vocab, 256, 4, 3, 512, 0.1)
    opt = torch.optim.Adam(m.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    src = 4 + torch.randint(0, a.vocab - 4, (a.batch, a.src))
    tgt = 4 + torch.randint(0, a.vocab - 4, (a.batch, a.tgt))
    tgt[:, -1] = 2
    dec_in = torch.cat([torch.ones(a.batch, 1, dtype=torch.long), tgt[:, :-1]], dim=1)
    # Weights and data are drawn on the CPU and then moved, so every device
    # starts from the same values.
    m.to(dev)
    src, tgt, dec_in = src.to(dev), tgt.to(dev), dec_in.to(dev)

    def step():
        opt.zero_grad()
        with bench.autocast():
            loss = m(src, dec_in, tgt)
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()

    bench.report(bench.time(step, a.steps), a.batch * a.tgt, "training step")


if __name__ == "__main__":
    main()
