#!/usr/bin/env python3
"""A T5 in PyTorch, the PyTorch side of compbench's T5 benchmarks
(models/pretrained's BenchmarkT5TrainStep and BenchmarkT5Decode on the CPU;
engine's BenchmarkGPUT5TrainStep and BenchmarkGPUT5Decode on a GPU), with
seq2seq_reference.py's batched T5 on the weights of DIR
(seq2seq_reference.py random-checkpoint DIR writes random ones of
t5-small's shape):

  bench_torch_t5.py step DIR [--batch 16 --src 32 --tgt 32 --steps N]
      forward and backward of the mean cross-entropy of a random batch
      (no optimizer step); tokens/s counts batch x target tokens
  bench_torch_t5.py decode DIR [--batch 16 --src 31 --len 64 --reps N]
      greedy decoding with a key/value cache, the encoder run once outside
      the timing, in inference mode; tokens/s counts batch x positions

Both take --device, --tf32 and --autocast bf16 (scripts/bench_torch_common.py)
and print "pytorch ms/step X" (the median step or decoding) and
"pytorch tokens/s N ..." over the mean."""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_common import Bench, add_args  # noqa: E402
from gpt2_reference import load_safetensors  # noqa: E402
from seq2seq_reference import rms_norm, t5_batched, t5_ff, t5_position_bias  # noqa: E402


def load(a, bench, grad):
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    W = {k: v.float().to(bench.device).requires_grad_(grad)
         for k, v in load_safetensors(os.path.join(a.dir, "model.safetensors")).items()}
    return cfg, W


def step_bench(a, bench):
    cfg, W = load(a, bench, True)
    g = torch.Generator().manual_seed(2)
    V = cfg["vocab_size"]
    src = torch.randint(3, V, (a.batch, a.src), generator=g).to(bench.device)
    labels = torch.randint(3, V, (a.batch, a.tgt), generator=g).to(bench.device)
    dec = torch.cat([torch.zeros(a.batch, 1, dtype=torch.long, device=bench.device), labels[:, :-1]], 1)

    def step():
        for w in W.values():
            w.grad = None
        with bench.autocast():
            logits = t5_batched(W, cfg, src, dec)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V).float(), labels.reshape(-1))
        loss.backward()

    bench.report(bench.time(step, a.steps), a.batch * a.tgt, "forward and backward")


def encode(W, cfg, src):
    """The encoder over a batch [B, S] -> [B, S, D], batched."""
    H, dk = cfg["num_heads"], cfg["d_kv"]
    B, S = src.shape
    bias = t5_position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True, cfg)

    def heads(t):
        return t.view(B, S, H, dk).transpose(1, 2)

    x = W["shared.weight"][src]
    for i in range(cfg["num_layers"]):
        p = f"encoder.block.{i}.layer."
        a = p + "0.SelfAttention."
        h = rms_norm(x, W[p + "0.layer_norm.weight"])
        q, k, v = (heads(h @ W[a + n + ".weight"].T) for n in "qkv")
        o = torch.softmax(q @ k.transpose(-1, -2) + bias, -1) @ v
        x = x + o.transpose(1, 2).reshape(B, S, H * dk) @ W[a + "o.weight"].T
        x = x + t5_ff(W, p + "1.DenseReluDense.", rms_norm(x, W[p + "1.layer_norm.weight"]), cfg)
    return rms_norm(x, W["encoder.final_layer_norm.weight"])


def greedy_cached(W, cfg, mem, steps):
    """Greedy decoding of a batch from the encoder output mem [B, S, D] with
    a key/value cache: the cross-attention keys and values projected once,
    each step one position per row; returns the ids [B, steps]."""
    H, dk = cfg["num_heads"], cfg["d_kv"]
    B, dev = mem.shape[0], mem.device
    emb = W["shared.weight"]
    bias = t5_position_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], steps, steps,
                            False, cfg)  # [H, steps, steps]

    def heads(t):
        return t.view(B, t.shape[1], H, dk).transpose(1, 2)  # [B, H, T, dk]

    pre = [f"decoder.block.{i}.layer." for i in range(cfg["num_decoder_layers"])]
    cross = [(heads(mem @ W[p + "1.EncDecAttention.k.weight"].T), heads(mem @ W[p + "1.EncDecAttention.v.weight"].T))
             for p in pre]
    keys = [mem.new_zeros(B, H, steps, dk) for _ in pre]
    vals = [mem.new_zeros(B, H, steps, dk) for _ in pre]
    tok = torch.full((B,), cfg.get("decoder_start_token_id", 0), dtype=torch.long, device=dev)
    out = []
    for t in range(steps):
        y = emb[tok][:, None, :]  # [B, 1, D]
        for i, p in enumerate(pre):
            h = rms_norm(y, W[p + "0.layer_norm.weight"])
            a = p + "0.SelfAttention."
            keys[i][:, :, t:t + 1] = heads(h @ W[a + "k.weight"].T)
            vals[i][:, :, t:t + 1] = heads(h @ W[a + "v.weight"].T)
            s = heads(h @ W[a + "q.weight"].T) @ keys[i][:, :, :t + 1].transpose(-1, -2) + bias[:, t:t + 1, :t + 1]
            o = torch.softmax(s, -1) @ vals[i][:, :, :t + 1]
            y = y + o.transpose(1, 2).reshape(B, 1, H * dk) @ W[a + "o.weight"].T
            h = rms_norm(y, W[p + "1.layer_norm.weight"])
            a = p + "1.EncDecAttention."
            o = torch.softmax(heads(h @ W[a + "q.weight"].T) @ cross[i][0].transpose(-1, -2), -1) @ cross[i][1]
            y = y + o.transpose(1, 2).reshape(B, 1, H * dk) @ W[a + "o.weight"].T
            y = y + t5_ff(W, p + "2.DenseReluDense.", rms_norm(y, W[p + "2.layer_norm.weight"]), cfg)
        y = rms_norm(y, W["decoder.final_layer_norm.weight"])
        tok = ((y[:, 0] * cfg["d_model"] ** -0.5) @ emb.T).argmax(-1)
        out.append(tok)
    return torch.stack(out, 1)


def decode_bench(a, bench):
    cfg, W = load(a, bench, False)
    g = torch.Generator().manual_seed(2)
    src = torch.randint(3, cfg["vocab_size"], (a.batch, a.src), generator=g).to(bench.device)
    with torch.inference_mode(), bench.autocast():
        mem = encode(W, cfg, src)

        def step():
            with torch.inference_mode(), bench.autocast():
                greedy_cached(W, cfg, mem, a.len)

        bench.report(bench.time(step, a.reps), a.batch * a.len, "decoding")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("step")
    s.add_argument("dir")
    s.add_argument("--batch", type=int, default=16)
    s.add_argument("--src", type=int, default=32)
    s.add_argument("--tgt", type=int, default=32)
    s.add_argument("--steps", type=int, default=10)
    add_args(s)
    d = sub.add_parser("decode")
    d.add_argument("dir")
    d.add_argument("--batch", type=int, default=16)
    d.add_argument("--src", type=int, default=31)
    d.add_argument("--len", type=int, default=64)
    d.add_argument("--reps", type=int, default=3)
    add_args(d)
    a = ap.parse_args()
    bench = Bench(a)
    (step_bench if a.cmd == "step" else decode_bench)(a, bench)


if __name__ == "__main__":
    main()
