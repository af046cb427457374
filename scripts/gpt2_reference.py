#!/usr/bin/env python3
"""Independent GPT-2 implementation in plain PyTorch (no transformers).

Used to produce the log-probability fixture that compbench's Go model is tested
against, and as the PyTorch side of the scoring benchmark.

  gpt2_reference.py fixture OUTDIR
      write config.json, model.safetensors (F16, random weights, real GPT-2
      vocabulary size) and expected.json (per-token log-probabilities of a few
      token sequences, computed in float64 one sequence at a time).
  gpt2_reference.py random-checkpoint OUTDIR --size small|medium|tiny
      write a randomly initialised F32 checkpoint in Hugging Face layout.
  gpt2_reference.py bench DIR --batch B --seq T --batches N [--threads K] [--device D]
      score N random batches with PyTorch (on the CPU, or torch device D)
      and print tokens/s.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import torch

SIZES = {
    "tiny": dict(n_layer=2, n_head=2, n_embd=16),
    "small": dict(n_layer=12, n_head=12, n_embd=768),
    "medium": dict(n_layer=24, n_head=16, n_embd=1024),
}

DTYPES = {torch.float16: "F16", torch.float32: "F32", torch.float64: "F64"}
FROM_DTYPE = {"F16": torch.float16, "F32": torch.float32, "BF16": torch.bfloat16, "F64": torch.float64}


def save_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[base + b : base + en]), dtype=FROM_DTYPE[e["dtype"]])
        out[name.removeprefix("transformer.")] = t.reshape(e["shape"])
    return out


def random_weights(cfg, gen, std, dtype):
    E, V, P = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]

    def rnd(*shape, mean=0.0, s=std):
        return (torch.randn(*shape, generator=gen, dtype=torch.float64) * s + mean).to(dtype)

    w = {"wte.weight": rnd(V, E), "wpe.weight": rnd(P, E), "ln_f.weight": rnd(E, mean=1.0), "ln_f.bias": rnd(E)}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        w.update({
            p + "ln_1.weight": rnd(E, mean=1.0), p + "ln_1.bias": rnd(E),
            p + "attn.c_attn.weight": rnd(E, 3 * E), p + "attn.c_attn.bias": rnd(3 * E),
            p + "attn.c_proj.weight": rnd(E, E), p + "attn.c_proj.bias": rnd(E),
            p + "ln_2.weight": rnd(E, mean=1.0), p + "ln_2.bias": rnd(E),
            p + "mlp.c_fc.weight": rnd(E, 4 * E), p + "mlp.c_fc.bias": rnd(4 * E),
            p + "mlp.c_proj.weight": rnd(4 * E, E), p + "mlp.c_proj.bias": rnd(E),
        })
    return w


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + b


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def log_probs(w, cfg, ids, mask):
    """ids, mask: [B, T] (mask 1 for real tokens, left padding 0).
    Returns [B, T-1] log p(ids[:, t] | ids[:, <t])."""
    B, T = ids.shape
    E, H = cfg["n_embd"], cfg["n_head"]
    D = E // H
    eps = cfg["layer_norm_epsilon"]
    pos = (mask.cumsum(-1) - 1).clamp(min=0)  # [B, T] positions skip padding
    x = w["wte.weight"][ids] + w["wpe.weight"][pos]  # [B, T, E]
    causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
    allowed = causal[None] & mask.bool()[:, None, :]  # [B, Tq, Tk]
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # [B, T, 3E]
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2) for t in qkv.split(E, -1))  # [B, H, T, D]
        att = q @ k.transpose(-1, -2) / math.sqrt(D)  # [B, H, Tq, Tk]
        att = att.masked_fill(~allowed[:, None], float("-inf"))
        att = torch.softmax(att, -1).nan_to_num(0.0)
        a = (att @ v).transpose(1, 2).reshape(B, T, E)
        x = x + a @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        h = gelu_tanh(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
    logits = x @ w["wte.weight"].T  # [B, T, V]
    lp = torch.log_softmax(logits[:, :-1], -1)
    return lp.gather(-1, ids[:, 1:, None])[..., 0]  # [B, T-1]


def cmd_fixture(a):
    os.makedirs(a.out, exist_ok=True)
    cfg = dict(SIZES["tiny"], vocab_size=50257, n_positions=32, n_ctx=32, layer_norm_epsilon=1e-5,
               model_type="gpt2", architectures=["GPT2LMHeadModel"])
    gen = torch.Generator().manual_seed(20240601)
    w16 = random_weights(cfg, gen, 0.3, torch.float16)
    save_safetensors(os.path.join(a.out, "model.safetensors"), {"transformer." + k: v for k, v in w16.items()})
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    w = {k: v.to(torch.float64) for k, v in w16.items()}
    seqs = [
        [50256, 15496, 995, 11, 428, 318, 257, 1332, 13, 50256],  # <|endoftext|>Hello world, this is a test.<|endoftext|>
        [50256, 4391, 50256],
        [7, 7, 7, 7, 7, 7],
        torch.randint(0, 50257, (32,), generator=gen).tolist(),  # n_positions tokens
        torch.randint(0, 50257, (5,), generator=gen).tolist(),
    ]
    cases = []
    for s in seqs:
        ids = torch.tensor([s])
        lp = log_probs(w, cfg, ids, torch.ones_like(ids))[0]
        cases.append({"ids": s, "logprobs": [round(x, 9) for x in lp.tolist()]})
    with open(os.path.join(a.out, "expected.json"), "w") as f:
        json.dump({"about": "log p(ids[t] | ids[:t]) for t >= 1, float64, one sequence at a time",
                   "cases": cases}, f, indent=1)
        f.write("\n")


def cmd_random_checkpoint(a):
    os.makedirs(a.out, exist_ok=True)
    cfg = dict(SIZES[a.size], vocab_size=50257, n_positions=1024, n_ctx=1024, layer_norm_epsilon=1e-5,
               model_type="gpt2", architectures=["GPT2LMHeadModel"])
    gen = torch.Generator().manual_seed(a.seed)
    w = random_weights(cfg, gen, 0.02, torch.float32)
    save_safetensors(os.path.join(a.out, "model.safetensors"), w)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def cmd_bench(a):
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    cfg.setdefault("layer_norm_epsilon", 1e-5)
    dev = torch.device(a.device)
    w = {k: v.float().to(dev) for k, v in load_safetensors(os.path.join(a.dir, "model.safetensors")).items()}
    gen = torch.Generator().manual_seed(1)
    batches = [torch.randint(0, cfg["vocab_size"], (a.batch, a.seq), generator=gen).to(dev) for _ in range(a.batches + 1)]
    mask = torch.ones(a.batch, a.seq, dtype=torch.long).to(dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    with torch.no_grad():
        log_probs(w, cfg, batches[0], mask)  # warm-up
        sync()
        t0 = time.perf_counter()
        for b in batches[1:]:
            log_probs(w, cfg, b, mask)
        sync()  # kernels run asynchronously: time them to completion
        dt = time.perf_counter() - t0
    where = f"{a.threads} threads"
    if dev.type != "cpu":
        tf32 = torch.backends.cuda.matmul.allow_tf32 if dev.type == "cuda" else False
        where = f"device {a.device}, matmul.allow_tf32 {tf32}"
    print(f"pytorch tokens/s {a.batch * a.seq * a.batches / dt:.1f} ({a.batches} batches of {a.batch}x{a.seq}, {dt:.2f} s, {where})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fixture")
    f.add_argument("out")
    r = sub.add_parser("random-checkpoint")
    r.add_argument("out")
    r.add_argument("--size", choices=sorted(SIZES), default="small")
    r.add_argument("--seed", type=int, default=1)
    b = sub.add_parser("bench")
    b.add_argument("dir")
    b.add_argument("--batch", type=int, default=32)
    b.add_argument("--seq", type=int, default=32)
    b.add_argument("--batches", type=int, default=4)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--device", default="cpu", help="torch device: cpu (default), cuda, cuda:N")
    a = p.parse_args()
    {"fixture": cmd_fixture, "random-checkpoint": cmd_random_checkpoint, "bench": cmd_bench}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
