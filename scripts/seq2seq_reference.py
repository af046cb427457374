#!/usr/bin/env python3
"""Tiny random T5 and BART checkpoints in the Hugging Face layout, with
reference outputs from independent plain-PyTorch forward passes (no
transformers library), for testing a loader of pretrained encoder-decoders.

  seq2seq_reference.py random-checkpoint OUTDIR [--size t5-small]
      a T5 v1.0 of t5-small's shape with random weights (F32, about 240
      MB), for benchmarks.
  seq2seq_reference.py bench DIR [--batch B --src S --tgt T --steps N --threads K]
      times forward and backward of a random batch's cross-entropy in
      PyTorch on DIR's weights; prints "pytorch ms/step X".
  seq2seq_reference.py fixture OUTDIR
      writes OUTDIR/t5-tiny (T5 v1.0: ReLU feed-forward, output tied to
      the embeddings and rescaled by d_model^-0.5), OUTDIR/t5v11-tiny (T5
      v1.1: gated-GELU feed-forward, untied output) and OUTDIR/bart-tiny,
      each with config.json (Hugging Face's keys), model.safetensors (F32,
      Hugging Face's tensor names; weights tied to model.shared / shared are
      stored once, under that name), the tokenizer files (T5: a small
      SentencePiece-unigram tokenizer.json; BART: a byte-level BPE
      vocab.json and merges.txt) and reference.json: per example the
      encoder and decoder input ids, the labels, the logits [T, V] and each
      label's log-probability, computed in float64; for T5 also hand-worked
      segmentations of the tokenizer.

The architectures, as Hugging Face's modeling_t5.py and modeling_bart.py
define them:
  T5: pre-norm blocks with RMS layer norm (no mean, no bias, eps 1e-6);
      attention without biases and without 1/sqrt(d) scaling; T5's
      relative-position buckets (bidirectional in the encoder, causal in the
      decoder), whose table lives in the first block of each stack and whose
      bias every block adds; cross-attention without position bias; the
      decoder starts from the pad id 0.
  BART: post-norm layers (LayerNorm eps 1e-5 after each residual), learned
      positions offset by 2, layernorm_embedding after the embeddings, exact
      (erf) GELU, queries scaled by head_dim^-0.5, logits from the shared
      embeddings plus final_logits_bias; the decoder starts from
      decoder_start_token_id 2.
"""
import argparse
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_reference import save_safetensors  # noqa: E402

# ---------------------------------------------------------------- T5

T5_PIECES = [
    # (piece, log-probability). The scores are chosen so that the
    # segmentations in T5_SEGMENTATIONS are worked out by hand below.
    ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0),
    ("▁", -3.0), ("▁jump", -4.0), ("▁j", -6.0), ("ump", -6.0), ("ing", -4.5),
    ("▁twice", -5.0), ("▁tw", -6.0), ("ice", -6.0), ("▁walk", -4.0), ("▁and", -4.0),
    ("▁left", -4.5), ("▁turn", -4.5), ("▁around", -5.0), ("▁thrice", -5.0),
    ("▁run", -4.5), ("▁look", -4.5), ("▁after", -5.0), ("▁opposite", -5.5), ("▁right", -4.5),
    ("JUMP", -5.0), ("WALK", -5.0), ("RUN", -5.0), ("LOOK", -5.0), ("LTURN", -5.5), ("RTURN", -5.5),
] + [(c, -8.0) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]

# Hand-worked Viterbi segmentations (the highest sum of log-probabilities):
#   "▁jumping": ▁jump+ing = -8.5 beats ▁j+ump+ing = -16.5 and
#               ▁jump+i+n+g = -28.
#   "▁twice": ▁twice = -5 beats ▁tw+ice = -12.
#   "▁walk": -4.  "▁left": -4.5.
T5_SEGMENTATIONS = [
    ("jumping twice", ["▁jump", "ing", "▁twice"]),
    ("walk left", ["▁walk", "▁left"]),
]


def t5_tokenizer_json():
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i, (p, _) in enumerate(T5_PIECES[:3])
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}},
        },
        "decoder": {"type": "Metaspace", "replacement": "▁", "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": 2, "vocab": [[p, s] for p, s in T5_PIECES]},
    }


def viterbi(text, pieces):
    """The unigram segmentation of one word (with its ▁) by dynamic
    programming, to check the hand-worked table."""
    score = dict(pieces)
    best = [(0.0, [])] + [(-math.inf, None)] * len(text)
    for end in range(1, len(text) + 1):
        for start in range(end):
            p = text[start:end]
            if p in score and best[start][1] is not None and best[start][0] + score[p] > best[end][0]:
                best[end] = (best[start][0] + score[p], best[start][1] + [p])
    return best[-1][1]


def t5_encode(text):
    ids = {p: i for i, (p, _) in enumerate(T5_PIECES)}
    out = []
    for w in text.split():
        out += [ids[p] for p in viterbi("▁" + w, T5_PIECES[3:])]
    return out + [1]  # </s>


def rms_norm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def t5_bucket(rel, bidirectional, num_buckets, max_distance):
    ret = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        ret += (rel > 0).long() * num_buckets
        n = rel.abs()
    else:
        n = -torch.clamp(rel, max=0)
    max_exact = num_buckets // 2
    small = n < max_exact
    large = max_exact + (torch.log(n.double().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = torch.clamp(large, max=num_buckets - 1)
    return ret + torch.where(small, n, large)


def t5_position_bias(table, q_len, k_len, bidirectional, cfg):
    ctx = torch.arange(q_len)[:, None]
    mem = torch.arange(k_len)[None, :]
    b = t5_bucket(mem - ctx, bidirectional, cfg["relative_attention_num_buckets"],
                  cfg["relative_attention_max_distance"])
    return table[b.to(table.device)].permute(2, 0, 1)  # [H, q, k]


def t5_attention(W, pre, x, kv, bias, cfg):
    H, dk = cfg["num_heads"], cfg["d_kv"]

    def heads(t):
        return t.view(t.shape[0], H, dk).transpose(0, 1)  # [H, T, dk]

    q = heads(x @ W[pre + "q.weight"].T)
    k = heads(kv @ W[pre + "k.weight"].T)
    v = heads(kv @ W[pre + "v.weight"].T)
    s = q @ k.transpose(1, 2) + bias  # no 1/sqrt(dk): T5 folds it into the initialisation
    o = torch.softmax(s, -1) @ v  # [H, T, dk]
    return o.transpose(0, 1).reshape(x.shape[0], H * dk) @ W[pre + "o.weight"].T


def gelu_new(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x.pow(3))))


def t5_ff(W, pre, x, cfg):
    if cfg["feed_forward_proj"] == "gated-gelu":
        h = gelu_new(x @ W[pre + "wi_0.weight"].T) * (x @ W[pre + "wi_1.weight"].T)
    else:
        h = torch.relu(x @ W[pre + "wi.weight"].T)
    return h @ W[pre + "wo.weight"].T


def t5_forward(W, cfg, src, dec_in):
    emb = W["shared.weight"]
    x = emb[src]
    S = len(src)
    enc_bias = t5_position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True, cfg)
    for i in range(cfg["num_layers"]):
        p = f"encoder.block.{i}.layer."
        h = rms_norm(x, W[p + "0.layer_norm.weight"])
        x = x + t5_attention(W, p + "0.SelfAttention.", h, h, enc_bias, cfg)
        x = x + t5_ff(W, p + "1.DenseReluDense.", rms_norm(x, W[p + "1.layer_norm.weight"]), cfg)
    mem = rms_norm(x, W["encoder.final_layer_norm.weight"])
    y = emb[dec_in]
    T = len(dec_in)
    causal = torch.triu(torch.full((T, T), -math.inf, dtype=torch.float64), 1)
    dec_bias = t5_position_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, T, False,
                                cfg) + causal
    for i in range(cfg["num_decoder_layers"]):
        p = f"decoder.block.{i}.layer."
        h = rms_norm(y, W[p + "0.layer_norm.weight"])
        y = y + t5_attention(W, p + "0.SelfAttention.", h, h, dec_bias, cfg)
        h = rms_norm(y, W[p + "1.layer_norm.weight"])
        y = y + t5_attention(W, p + "1.EncDecAttention.", h, mem, 0.0, cfg)
        y = y + t5_ff(W, p + "2.DenseReluDense.", rms_norm(y, W[p + "2.layer_norm.weight"]), cfg)
    y = rms_norm(y, W["decoder.final_layer_norm.weight"])
    if cfg["tie_word_embeddings"]:
        return (y * cfg["d_model"] ** -0.5) @ emb.T
    return y @ W["lm_head.weight"].T


def t5_weights(cfg, gen):
    d, dk, H, ff, V = cfg["d_model"], cfg["d_kv"], cfg["num_heads"], cfg["d_ff"], cfg["vocab_size"]
    inner = H * dk
    W = {"shared.weight": torch.randn(V, d, generator=gen)}

    def lin(name, out, inp):
        W[name] = torch.randn(out, inp, generator=gen) * inp ** -0.5

    def norm(name):
        W[name] = 1 + 0.1 * torch.randn(d, generator=gen)

    def attn(pre):
        lin(pre + "q.weight", inner, d)
        lin(pre + "k.weight", inner, d)
        lin(pre + "v.weight", inner, d)
        lin(pre + "o.weight", d, inner)

    def ffn(pre):
        if cfg["feed_forward_proj"] == "gated-gelu":
            lin(pre + "wi_0.weight", ff, d)
            lin(pre + "wi_1.weight", ff, d)
        else:
            lin(pre + "wi.weight", ff, d)
        lin(pre + "wo.weight", d, ff)

    nb = cfg["relative_attention_num_buckets"]
    for stack, n, sub in (("encoder", cfg["num_layers"], 2), ("decoder", cfg["num_decoder_layers"], 3)):
        for i in range(n):
            p = f"{stack}.block.{i}.layer."
            attn(p + "0.SelfAttention.")
            norm(p + "0.layer_norm.weight")
            if i == 0:
                W[p + "0.SelfAttention.relative_attention_bias.weight"] = torch.randn(nb, H, generator=gen)
            if stack == "decoder":
                attn(p + "1.EncDecAttention.")
                norm(p + "1.layer_norm.weight")
            ffn(p + f"{sub - 1}.DenseReluDense.")
            norm(p + f"{sub - 1}.layer_norm.weight")
        norm(f"{stack}.final_layer_norm.weight")
    if not cfg["tie_word_embeddings"]:
        lin("lm_head.weight", V, d)
    return W


def t5_config(v11):
    return {
        "model_type": "t5", "architectures": ["T5ForConditionalGeneration"],
        "vocab_size": len(T5_PIECES), "d_model": 16, "d_kv": 4, "num_heads": 3, "d_ff": 24,
        "num_layers": 2, "num_decoder_layers": 2,
        "relative_attention_num_buckets": 8, "relative_attention_max_distance": 16,
        "dropout_rate": 0.1, "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0,
        "feed_forward_proj": "gated-gelu" if v11 else "relu", "tie_word_embeddings": not v11,
        "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    }


T5_EXAMPLES = [("jump twice", "JUMP JUMP"), ("turn around left thrice", "LTURN LTURN LTURN LTURN LTURN LTURN")]

# ---------------------------------------------------------------- BART


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BART_MERGES = ["Ġ j", "Ġj u", "Ġju m", "Ġjum p", "Ġ t", "Ġt w", "Ġtw i", "Ġtwi c", "Ġtwic e",
               "J U", "JU M", "JUM P", "Ġ J", "j u", "ju m", "jum p"]


def bart_vocab():
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for c in bytes_to_unicode().values():
        vocab.setdefault(c, len(vocab))
    for m in BART_MERGES:
        vocab.setdefault(m.replace(" ", ""), len(vocab))
    return vocab


def bart_encode(text, vocab):
    """GPT-2 byte-level BPE with BART's <s> ... </s>: each word (a leading
    space as Ġ except the first) merged by rank."""
    b2u = bytes_to_unicode()
    ranks = {tuple(m.split()): i for i, m in enumerate(BART_MERGES)}
    ids = [0]
    for k, w in enumerate(text.split(" ")):
        word = [b2u[b] for b in ((" " if k else "") + w).encode()]
        while len(word) > 1:
            pairs = [(ranks.get((a, b), math.inf), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
            r, i = min(pairs)
            if r == math.inf:
                break
            word = word[:i] + [word[i] + word[i + 1]] + word[i + 2:]
        ids += [vocab[t] for t in word]
    return ids + [2]


def layer_norm(x, w, b, eps=1e-5):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def bart_attention(W, pre, x, kv, mask, cfg, heads):
    d = cfg["d_model"]
    dh = d // heads

    def proj(t, name):
        return t @ W[pre + name + ".weight"].T + W[pre + name + ".bias"]

    def split(t):
        return t.view(t.shape[0], heads, dh).transpose(0, 1)

    q = split(proj(x, "q_proj") * dh ** -0.5)
    k, v = split(proj(kv, "k_proj")), split(proj(kv, "v_proj"))
    o = torch.softmax(q @ k.transpose(1, 2) + mask, -1) @ v
    return proj(o.transpose(0, 1).reshape(x.shape[0], d), "out_proj")


def bart_ffn(W, pre, x):
    h = torch.nn.functional.gelu(x @ W[pre + "fc1.weight"].T + W[pre + "fc1.bias"])  # exact (erf) GELU
    return h @ W[pre + "fc2.weight"].T + W[pre + "fc2.bias"]


def bart_embed(W, stack, ids, cfg):
    scale = math.sqrt(cfg["d_model"]) if cfg["scale_embedding"] else 1.0
    x = W["model.shared.weight"][ids] * scale + W[f"model.{stack}.embed_positions.weight"][torch.arange(len(ids)) + 2]
    return layer_norm(x, W[f"model.{stack}.layernorm_embedding.weight"], W[f"model.{stack}.layernorm_embedding.bias"])


def bart_forward(W, cfg, src, dec_in):
    x = bart_embed(W, "encoder", src, cfg)
    for i in range(cfg["encoder_layers"]):
        p = f"model.encoder.layers.{i}."
        x = layer_norm(x + bart_attention(W, p + "self_attn.", x, x, 0.0, cfg, cfg["encoder_attention_heads"]),
                       W[p + "self_attn_layer_norm.weight"], W[p + "self_attn_layer_norm.bias"])
        x = layer_norm(x + bart_ffn(W, p, x), W[p + "final_layer_norm.weight"], W[p + "final_layer_norm.bias"])
    y = bart_embed(W, "decoder", dec_in, cfg)
    T = len(dec_in)
    causal = torch.triu(torch.full((T, T), -math.inf, dtype=torch.float64), 1)
    for i in range(cfg["decoder_layers"]):
        p = f"model.decoder.layers.{i}."
        h = cfg["decoder_attention_heads"]
        y = layer_norm(y + bart_attention(W, p + "self_attn.", y, y, causal, cfg, h),
                       W[p + "self_attn_layer_norm.weight"], W[p + "self_attn_layer_norm.bias"])
        y = layer_norm(y + bart_attention(W, p + "encoder_attn.", y, x, 0.0, cfg, h),
                       W[p + "encoder_attn_layer_norm.weight"], W[p + "encoder_attn_layer_norm.bias"])
        y = layer_norm(y + bart_ffn(W, p, y), W[p + "final_layer_norm.weight"], W[p + "final_layer_norm.bias"])
    return y @ W["model.shared.weight"].T + W["final_logits_bias"][0]


def bart_weights(cfg, gen):
    d, V, P = cfg["d_model"], cfg["vocab_size"], cfg["max_position_embeddings"] + 2
    W = {"model.shared.weight": torch.randn(V, d, generator=gen) * 0.5,
         "final_logits_bias": 0.1 * torch.randn(1, V, generator=gen)}

    def lin(name, out, inp):
        W[name + ".weight"] = torch.randn(out, inp, generator=gen) * inp ** -0.5
        W[name + ".bias"] = 0.1 * torch.randn(out, generator=gen)

    def norm(name):
        W[name + ".weight"] = 1 + 0.1 * torch.randn(d, generator=gen)
        W[name + ".bias"] = 0.1 * torch.randn(d, generator=gen)

    for stack in ("encoder", "decoder"):
        W[f"model.{stack}.embed_positions.weight"] = 0.5 * torch.randn(P, d, generator=gen)
        norm(f"model.{stack}.layernorm_embedding")
        for i in range(cfg[f"{stack}_layers"]):
            p = f"model.{stack}.layers.{i}."
            attns = ["self_attn"] + (["encoder_attn"] if stack == "decoder" else [])
            for a in attns:
                for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    lin(p + a + "." + n, d, d)
                norm(p + a + "_layer_norm")
            lin(p + "fc1", cfg[f"{stack}_ffn_dim"], d)
            lin(p + "fc2", d, cfg[f"{stack}_ffn_dim"])
            norm(p + "final_layer_norm")
    return W


def bart_config(vocab_size):
    return {
        "model_type": "bart", "architectures": ["BartForConditionalGeneration"],
        "vocab_size": vocab_size, "d_model": 16, "encoder_layers": 2, "decoder_layers": 2,
        "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 24, "decoder_ffn_dim": 24,
        "activation_function": "gelu", "max_position_embeddings": 32, "scale_embedding": False,
        "dropout": 0.1, "attention_dropout": 0.0, "activation_dropout": 0.0, "init_std": 0.02,
        "is_encoder_decoder": True, "tie_word_embeddings": True,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 2, "forced_bos_token_id": 0,
    }


BART_EXAMPLES = [("jump twice", "JUMP JUMP"), ("jump", "JUMP")]

# ---------------------------------------------------------------- output


def shift_right(labels, start):
    return [start] + labels[:-1]


def references(forward, W, cfg, pairs, encode, start):
    W64 = {k: v.double() for k, v in W.items()}
    out = []
    for src_text, tgt_text in pairs:
        src, labels = encode(src_text), encode(tgt_text)
        dec_in = shift_right(labels, start)
        with torch.no_grad():
            logits = forward(W64, cfg, torch.tensor(src), torch.tensor(dec_in))
        lp = torch.log_softmax(logits, -1)
        out.append({
            "input": src_text, "target": tgt_text, "input_ids": src, "decoder_input_ids": dec_in, "labels": labels,
            "logits": [[round(v, 7) for v in row] for row in logits.tolist()],
            "label_logprobs": [round(lp[t, y].item(), 7) for t, y in enumerate(labels)],
        })
    return out


def write(dirname, cfg, W, refs, extra_files):
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    save_safetensors(os.path.join(dirname, "model.safetensors"), {k: v.float().contiguous() for k, v in W.items()})
    for name, content in extra_files.items():
        with open(os.path.join(dirname, name), "w", encoding="utf-8") as f:
            f.write(content)
    with open(os.path.join(dirname, "reference.json"), "w") as f:
        json.dump(refs, f, separators=(",", ":"))
        f.write("\n")


def fixture(out):
    for word, want in T5_SEGMENTATIONS:
        got = [p for w in word.split() for p in viterbi("▁" + w, T5_PIECES[3:])]
        assert got == want, (word, got, want)
    tok = json.dumps(t5_tokenizer_json(), ensure_ascii=False, indent=1) + "\n"
    for name, v11, seed in (("t5-tiny", False, 1), ("t5v11-tiny", True, 2)):
        cfg = t5_config(v11)
        W = t5_weights(cfg, torch.Generator().manual_seed(seed))
        refs = {"examples": references(t5_forward, W, cfg, T5_EXAMPLES, t5_encode, cfg["decoder_start_token_id"]),
                "segmentations": [{"text": t, "pieces": p} for t, p in T5_SEGMENTATIONS]}
        write(os.path.join(out, name), cfg, W, refs, {"tokenizer.json": tok})
    vocab = bart_vocab()
    cfg = bart_config(len(vocab))
    W = bart_weights(cfg, torch.Generator().manual_seed(3))
    refs = {"examples": references(bart_forward, W, cfg, BART_EXAMPLES, lambda s: bart_encode(s, vocab),
                                   cfg["decoder_start_token_id"])}
    merges = "#version: 0.2\n" + "\n".join(BART_MERGES) + "\n"
    write(os.path.join(out, "bart-tiny"), cfg, W, refs,
          {"vocab.json": json.dumps(vocab, ensure_ascii=False) + "\n", "merges.txt": merges})


# ---------------------------------------------------------------- benchmark

SIZES = {
    # t5-small's shape (Raffel et al. 2020; Hugging Face's t5-small config).
    "t5-small": dict(d_model=512, d_kv=64, num_heads=8, d_ff=2048, num_layers=6, num_decoder_layers=6,
                     vocab_size=32128, relative_attention_num_buckets=32, relative_attention_max_distance=128),
}


def random_checkpoint(out, size):
    """A t5-small-shaped T5 v1.0 with random weights in the Hugging Face
    layout, with the tiny fixture's tokenizer (its 80 pieces fit the
    embeddings), for benchmarks."""
    cfg = t5_config(False)
    cfg.update(SIZES[size])
    W = t5_weights(cfg, torch.Generator().manual_seed(1))
    tok = json.dumps(t5_tokenizer_json(), ensure_ascii=False, indent=1) + "\n"
    write(out, cfg, W, [], {"tokenizer.json": tok})


def t5_batched(W, cfg, src, dec):
    """t5_forward over a batch [B, S] -> logits [B, T, V], full-length rows,
    with batched products (the benchmark's PyTorch side)."""
    H, dk = cfg["num_heads"], cfg["d_kv"]
    nb, md = cfg["relative_attention_num_buckets"], cfg["relative_attention_max_distance"]

    def attn(pre, x, kv, bias):
        B, Tq, _ = x.shape

        def heads(t):
            return t.view(B, t.shape[1], H, dk).transpose(1, 2)  # [B, H, T, dk]

        q, k, v = heads(x @ W[pre + "q.weight"].T), heads(kv @ W[pre + "k.weight"].T), heads(kv @ W[pre + "v.weight"].T)
        p = torch.softmax(q @ k.transpose(-1, -2) + bias, -1)
        return (p @ v).transpose(1, 2).reshape(B, Tq, H * dk) @ W[pre + "o.weight"].T

    emb = W["shared.weight"]
    S, T = src.shape[1], dec.shape[1]
    enc_bias = t5_position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True, cfg)
    causal = torch.triu(torch.full((T, T), -math.inf, device=src.device), 1)
    dec_bias = t5_position_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, T, False,
                                cfg) + causal
    x = emb[src]
    for i in range(cfg["num_layers"]):
        p = f"encoder.block.{i}.layer."
        h = rms_norm(x, W[p + "0.layer_norm.weight"])
        x = x + attn(p + "0.SelfAttention.", h, h, enc_bias)
        x = x + t5_ff(W, p + "1.DenseReluDense.", rms_norm(x, W[p + "1.layer_norm.weight"]), cfg)
    mem = rms_norm(x, W["encoder.final_layer_norm.weight"])
    y = emb[dec]
    for i in range(cfg["num_decoder_layers"]):
        p = f"decoder.block.{i}.layer."
        h = rms_norm(y, W[p + "0.layer_norm.weight"])
        y = y + attn(p + "0.SelfAttention.", h, h, dec_bias)
        h = rms_norm(y, W[p + "1.layer_norm.weight"])
        y = y + attn(p + "1.EncDecAttention.", h, mem, 0.0)
        y = y + t5_ff(W, p + "2.DenseReluDense.", rms_norm(y, W[p + "2.layer_norm.weight"]), cfg)
    y = rms_norm(y, W["decoder.final_layer_norm.weight"])
    return (y * cfg["d_model"] ** -0.5) @ emb.T


def bench(a):
    """Forward and backward of the mean cross-entropy over a random batch,
    float32, the weights of DIR as leaf tensors; prints "pytorch ms/step X"
    (the median)."""
    import statistics
    import time
    from gpt2_reference import load_safetensors

    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    dev = torch.device(a.device)
    W = {k: v.float().to(dev).requires_grad_() for k, v in load_safetensors(os.path.join(a.dir, "model.safetensors")).items()}
    g = torch.Generator().manual_seed(2)
    V = cfg["vocab_size"]
    src = torch.randint(3, V, (a.batch, a.src), generator=g).to(dev)
    labels = torch.randint(3, V, (a.batch, a.tgt), generator=g).to(dev)
    dec = torch.cat([torch.zeros(a.batch, 1, dtype=torch.long, device=dev), labels[:, :-1]], 1)

    def step():
        for w in W.values():
            w.grad = None
        logits = t5_batched(W, cfg, src, dec)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), labels.reshape(-1))
        loss.backward()
        if dev.type == "cuda":
            torch.cuda.synchronize()

    step()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    print(f"pytorch ms/step {1000 * statistics.median(times):.1f}")


def t5_greedy_cached(W, cfg, mem, steps):
    """Greedy decoding of a batch from the encoder output mem [B, S, D]
    with a key/value cache (the decoding benchmark's PyTorch side): the
    cross-attention keys and values projected once, each step one position
    per row; returns the ids [B, steps]."""
    H, dk = cfg["num_heads"], cfg["d_kv"]
    B = mem.shape[0]
    emb = W["shared.weight"]
    table = W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
    bias = t5_position_bias(table, steps, steps, False, cfg)  # [H, steps, steps]

    def heads(t):
        return t.view(B, t.shape[1], H, dk).transpose(1, 2)  # [B, H, T, dk]

    layers = range(cfg["num_decoder_layers"])
    pre = [f"decoder.block.{i}.layer." for i in layers]
    cross = [(heads(mem @ W[p + "1.EncDecAttention.k.weight"].T), heads(mem @ W[p + "1.EncDecAttention.v.weight"].T))
             for p in pre]
    cache = [(mem.new_zeros(B, H, 0, dk), mem.new_zeros(B, H, 0, dk)) for _ in layers]
    tok = torch.full((B,), cfg.get("decoder_start_token_id", 0), dtype=torch.long)
    out = []
    for t in range(steps):
        y = emb[tok][:, None, :]  # [B, 1, D]
        for i, p in enumerate(pre):
            h = rms_norm(y, W[p + "0.layer_norm.weight"])
            a = p + "0.SelfAttention."
            k = torch.cat([cache[i][0], heads(h @ W[a + "k.weight"].T)], 2)
            v = torch.cat([cache[i][1], heads(h @ W[a + "v.weight"].T)], 2)
            cache[i] = (k, v)
            pr = torch.softmax(heads(h @ W[a + "q.weight"].T) @ k.transpose(-1, -2) + bias[:, t:t + 1, :t + 1], -1)
            y = y + (pr @ v).transpose(1, 2).reshape(B, 1, H * dk) @ W[a + "o.weight"].T
            h = rms_norm(y, W[p + "1.layer_norm.weight"])
            a = p + "1.EncDecAttention."
            pr = torch.softmax(heads(h @ W[a + "q.weight"].T) @ cross[i][0].transpose(-1, -2), -1)
            y = y + (pr @ cross[i][1]).transpose(1, 2).reshape(B, 1, H * dk) @ W[a + "o.weight"].T
            y = y + t5_ff(W, p + "2.DenseReluDense.", rms_norm(y, W[p + "2.layer_norm.weight"]), cfg)
        y = rms_norm(y, W["decoder.final_layer_norm.weight"])
        tok = ((y[:, 0] * cfg["d_model"] ** -0.5) @ emb.T).argmax(-1)
        out.append(tok)
    return torch.stack(out, 1)


def bench_decode(a):
    """Greedy decoding with a key/value cache of a batch of random sources
    (the encoder run once, outside the timing), in inference mode; prints
    "pytorch decode-tokens/s X" (the median of a.reps runs)."""
    import statistics
    import time
    from gpt2_reference import load_safetensors

    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "config.json")) as f:
        cfg = json.load(f)
    W = {k: v.float() for k, v in load_safetensors(os.path.join(a.dir, "model.safetensors")).items()}
    g = torch.Generator().manual_seed(2)
    src = torch.randint(3, cfg["vocab_size"], (a.batch, a.src), generator=g)
    with torch.inference_mode():
        dec = torch.zeros(a.batch, 1, dtype=torch.long)
        emb = W["shared.weight"]
        x = emb[src]
        S = src.shape[1]
        enc_bias = t5_position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], S, S, True,
                                    cfg)
        for i in range(cfg["num_layers"]):
            p = f"encoder.block.{i}.layer."
            h = rms_norm(x, W[p + "0.layer_norm.weight"])
            x = x + torch.stack([t5_attention(W, p + "0.SelfAttention.", hb, hb, enc_bias, cfg) for hb in h])
            x = x + t5_ff(W, p + "1.DenseReluDense.", rms_norm(x, W[p + "1.layer_norm.weight"]), cfg)
        mem = rms_norm(x, W["encoder.final_layer_norm.weight"])
        del dec
        t5_greedy_cached(W, cfg, mem, 2)  # warm-up
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            t5_greedy_cached(W, cfg, mem, a.steps)
            times.append(time.perf_counter() - t0)
    print(f"pytorch decode-tokens/s {a.batch * a.steps / statistics.median(times):.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fixture")
    f.add_argument("outdir")
    r = sub.add_parser("random-checkpoint")
    r.add_argument("outdir")
    r.add_argument("--size", default="t5-small", choices=sorted(SIZES))
    b = sub.add_parser("bench")
    b.add_argument("dir")
    b.add_argument("--batch", type=int, default=16)
    b.add_argument("--src", type=int, default=32)
    b.add_argument("--tgt", type=int, default=32)
    b.add_argument("--steps", type=int, default=3)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--device", default="cpu")
    d = sub.add_parser("bench-decode")
    d.add_argument("dir")
    d.add_argument("--batch", type=int, default=16)
    d.add_argument("--src", type=int, default=31)
    d.add_argument("--steps", type=int, default=64)
    d.add_argument("--reps", type=int, default=3)
    d.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if a.cmd == "fixture":
        torch.set_num_threads(1)
        fixture(a.outdir)
    elif a.cmd == "random-checkpoint":
        random_checkpoint(a.outdir, a.size)
    elif a.cmd == "bench-decode":
        bench_decode(a)
    else:
        bench(a)


if __name__ == "__main__":
    main()
