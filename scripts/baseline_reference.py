#!/usr/bin/env python3
"""Float64 PyTorch references for compbench's baselines, as llm.c's
test_gpt2 checks its C model against PyTorch: tiny random weights under
compbench's parameter names, a padded batch, and from an independent
plain-PyTorch implementation (no compbench code) the logits, the loss and
every parameter's gradient.

  baseline_reference.py fixture TRANSFORMER_DIR LSTM_DIR
      writes into each directory cases.json (per case: the run config in
      compbench's config.json keys, the batch's source and target ids, the
      label smoothing, the loss and the training objective) and one
      CASE.safetensors per case: param.NAME (F32, the weights), grad.NAME
      (F64, the gradient of the objective), logits (F64 [tokens, V], the
      real target positions row by row) and, for the LSTM models, attention
      (F64 [tokens, S]) and, for lstm-copy, p_gen (F64 [tokens]).

Regenerate (PyTorch from make bench-deps; the seeds are fixed):

  python3 scripts/baseline_reference.py fixture \\
      models/transformer/testdata/reference models/lstm/testdata/reference

The weights are drawn in float64, rounded to float32 (what compbench
holds) and used from there in float64, so a float32 model that computes
the same function differs from these numbers by its rounding only. Each
example runs alone, without padding: the batch's padding and masks are
the Go side's. What is implemented, from the papers and docs/attention.md,
docs/lstm.md:

  Transformer (Vaswani et al. 2017 in Shi et al. 2023's configuration):
      pre-LayerNorm layers (eps 1e-5, biased variance), a final LayerNorm
      per stack, ReLU feed-forward, untied output projection with bias,
      embeddings unscaled plus sinusoidal positions (sin on even, cos on
      odd features, 10000^(2i/d)), scores scaled by 1/sqrt(d/heads), no
      dropout. Relative attention (Shi et al. §4): no positions; each
      self-attention layer adds a learned bias per head and T5 bucket
      (Raffel et al. 2020) of query minus key distance, bidirectional in
      the encoder, causal in the decoder; none on cross-attention.
      Decoder masks of Shi et al. §4.2 (docs/attention.md): the start
      token is a separator; C, P, BB and the three separator masks.
  Universal Transformer (Dehghani et al. 2018, tensor2tensor's
      universal_transformer "basic", which Keysers et al. ran): one encoder
      and one decoder layer applied ut_steps times; before each step the
      positions and a learned step embedding are added to the state. ACT
      (tensor2tensor's universal_transformer_act, act_type basic): halting
      p = sigmoid(state·w + b); a position still running keeps running
      while its summed p stays <= 1 - 0.01, else halts with remainder
      R = 1 - sum; step weight w = p (running), R (halting now), 0
      (halted); state' = layer(state); output = output·(1 - w) +
      state'·w. Ponder cost 0.01 · mean over real positions of
      (updates + R), per stack, added to the training objective only.
  Loss: mean over real target tokens of (1-eps)·(-log p_y) +
      eps·mean_v(-log p_v) (label smoothing over the whole vocabulary).
  lstm-attention (Keysers et al. 2020, App. E; docs/lstm.md): LSTM cells
      z = [x, h]·W + b, gates i, f, g, o; a bidirectional encoder
      (layer l > 0 reads [forward; backward]) from zero states, the
      backward direction starting at the last real token; a decoder LSTM
      stack from zero states over the decoder inputs (a copy id enters as
      <unk>); additive attention e_j = v·tanh(h·W_q + b + m_j·W_k) over the
      real source positions; logits = [h; ctx]·W_out + b_out.
  lstm-copy (Bogin et al. 2022, §5.3; Gu et al. 2016; See et al. 2017):
      p_gen = sigmoid([h; ctx; x_emb]·w + b), P(y) = p_gen·P_vocab(y) +
      (1 - p_gen)·(attention on the source positions holding y's token);
      a copy id V + j names the token at position j (an <unk> position
      only itself); loss -log P(y), no smoothing. With encoder
      "transformer" the memory is the Transformer encoder above
      (sinusoidal positions, encoder_heads heads).
"""
import argparse
import itertools
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_reference import save_safetensors  # noqa: E402

PAD, START, EOS, UNK = 0, 1, 2, 3
SEP = START  # the separator is the start token (docs/attention.md)
LN_EPS = 1e-5
ACT_EPS, ACT_WEIGHT = 0.01, 0.01
SMOOTHING = 0.1
F64 = torch.float64

# ---------------------------------------------------------------- weights


def draw(specs, seed):
    """specs: (name, shape, kind). Weights of order one, drawn in float64
    and rounded to float32."""
    g = torch.Generator().manual_seed(seed)
    W = {}
    for name, shape, kind in specs:
        r = torch.randn(*shape, generator=g, dtype=F64)
        if kind == "mat":
            r = r * shape[0] ** -0.5
        elif kind == "score":  # additive attention: scores that vary with the query
            r = r * 3 * shape[0] ** -0.5
        elif kind == "gain":
            r = 1 + 0.1 * r
        elif kind == "bias":
            r = 0.1 * r
        elif kind == "halt":  # tensor2tensor's halting bias starts at 1
            r = 1 + 0.5 * r
        elif kind in ("rel", "step"):
            r = 0.5 * r
        W[name] = r.float()
    return W


def attn_specs(name, D, rel_shape=None):
    out = [(f"{name}.w{p}", [D, D], "mat") for p in "qkvo"] + [(f"{name}.b{p}", [D], "bias") for p in "qkvo"]
    return out + ([(name + ".rel", rel_shape, "rel")] if rel_shape else [])


def ln_specs(name, D):
    return [(name + ".g", [D], "gain"), (name + ".b", [D], "bias")]


def ffn_specs(name, D, F):
    return [(name + ".w1", [D, F], "mat"), (name + ".b1", [F], "bias"),
            (name + ".w2", [F, D], "mat"), (name + ".b2", [D], "bias")]


def encoder_specs(layers, D, F, rel_shape):
    s = []
    for i in range(layers):
        s += attn_specs(f"enc{i}.self", D, rel_shape) + ln_specs(f"enc{i}.ln0", D) + ln_specs(f"enc{i}.ln1", D)
        s += ffn_specs(f"enc{i}.ffn", D, F)
    return s + ln_specs("enc.ln", D)


def transformer_specs(c):
    D, F, L = c["dim"], c["mlp_dim"], 1 if c.get("ut_steps") else c["layers"]
    rel = [c["rel_buckets"], c["heads"]] if c["relative"] else None
    s = [("src_emb", [c["src_vocab"], D], "emb"), ("tgt_emb", [c["tgt_vocab"], D], "emb")]
    s += encoder_specs(L, D, F, rel)
    for i in range(L):
        p = f"dec{i}"
        s += attn_specs(p + ".self", D, rel) + attn_specs(p + ".cross", D)
        s += ln_specs(p + ".ln0", D) + ln_specs(p + ".ln1", D) + ln_specs(p + ".ln2", D) + ffn_specs(p + ".ffn", D, F)
    s += ln_specs("dec.ln", D) + [("out.w", [D, c["tgt_vocab"]], "mat"), ("out.b", [c["tgt_vocab"]], "bias")]
    for stack in ("enc", "dec"):
        s += [(f"{stack}.step{t}", [D], "step") for t in range(c.get("ut_steps", 0))]
        if c.get("act"):
            s += [(stack + ".halt.w", [D, 1], "mat"), (stack + ".halt.b", [1], "halt")]
    return s


def lstm_specs(c):
    H, L = c["dim"], c["layers"]
    tenc = c["encoder"] == "transformer"
    Wm = H if tenc else 2 * H
    s = [("src_emb", [c["src_vocab"], H], "emb"), ("tgt_emb", [c["tgt_vocab"], H], "emb")]
    if tenc:
        s += encoder_specs(c["encoder_layers"], H, c["mlp_dim"], None)
    else:
        for l in range(L):
            n = H if l == 0 else 2 * H
            for d in ("fwd", "bwd"):
                s += [(f"enc{l}.{d}.w", [n + H, 4 * H], "mat"), (f"enc{l}.{d}.b", [4 * H], "bias")]
    for l in range(L):
        s += [(f"dec{l}.w", [2 * H, 4 * H], "mat"), (f"dec{l}.b", [4 * H], "bias")]
    # LSTM states and memory are below one and tanh flattens order-one
    # weights' scores: with them the attention was nearly uniform and the
    # query's gradient cancelled to 1e-3 of the keys'.
    s += [("attn.wq", [H, H], "score"), ("attn.wk", [Wm, H], "score"), ("attn.b", [H], "bias"),
          ("attn.v", [H], "score"), ("out.w", [H + Wm, c["tgt_vocab"]], "mat"), ("out.b", [c["tgt_vocab"]], "bias")]
    if c["variant"] == "lstm-copy":
        s += [("copy.w", [2 * H + Wm, 1], "mat"), ("copy.b", [1], "bias")]
    return s

# ---------------------------------------------------------------- Transformer


def layer_norm(W, name, x):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + LN_EPS) * W[name + ".g"] + W[name + ".b"]


def sinusoid(T, D):
    """Vaswani et al. §3.5: PE[t, 2i] = sin(t / 10000^(2i/D)), PE[t, 2i+1] = cos(...)."""
    ang = torch.arange(T, dtype=F64)[:, None] / 10000 ** (torch.arange(0, D, 2, dtype=F64) / D)
    pe = torch.zeros(T, D, dtype=F64)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : D // 2]
    return pe


def bucket(n, bidirectional, buckets, max_distance):
    """T5's relative-position bucket of n = query - key (Raffel et al.)."""
    ret = 0
    if bidirectional:
        buckets //= 2
        if n < 0:  # the key is after the query: the upper half
            ret, n = buckets, -n
    else:
        n = max(n, 0)
    exact = buckets // 2
    if n < exact:
        return ret + n
    return ret + min(exact + int(math.log(n / exact) / math.log(max_distance / exact) * (buckets - exact)), buckets - 1)


def rel_bias(table, T, bidirectional, c):
    idx = torch.tensor([[bucket(i - j, bidirectional, c["rel_buckets"], c["rel_max_distance"]) for j in range(T)]
                        for i in range(T)])
    return table[idx].permute(2, 0, 1)  # [H, T, T]


def decoder_allowed(kind, dec_in):
    """Shi et al. §4.2 as docs/attention.md defines it, over decoder inputs x."""
    T = len(dec_in)
    sep = [i == 0 or x == SEP for i, x in enumerate(dec_in)]
    k = list(itertools.accumulate(int(s) for s in sep))

    def C(i, j):
        return j <= i

    def BB(i, j):
        return j < T and C(i, j) and sep[i] and sep[j]

    out = torch.zeros(T, T, dtype=torch.bool)
    for i, j in itertools.product(range(T), range(T)):
        P = C(i, j) and k[i] == k[j]
        if kind == "causal":
            a = C(i, j)
        elif not sep[i]:
            a = P
        elif kind == "sep-full":
            a = P or C(i, j)
        elif kind == "sep-to-last":
            a = P or BB(i, j + 1)
        else:
            assert kind == "sep-to-sep-and-last"
            a = P or BB(i, j) or BB(i, j + 1)
        out[i, j] = a
    return out


def check_masks():
    """docs/attention.md's printed example of sep-to-last."""
    want = ["100000", "110000", "011000", "001100", "001110", "010011"]
    got = decoder_allowed("sep-to-last", [START, 10, SEP, 11, 11, SEP])
    assert ["".join(str(int(v)) for v in row) for row in got] == want, got


def attention(W, name, xq, xkv, heads, allowed, rel=None):
    Tq, D = xq.shape
    dh = D // heads

    def split(x):
        return x.view(x.shape[0], heads, dh).transpose(0, 1)  # [H, T, dh]

    q = split(xq @ W[name + ".wq"] + W[name + ".bq"])
    k = split(xkv @ W[name + ".wk"] + W[name + ".bk"])
    v = split(xkv @ W[name + ".wv"] + W[name + ".bv"])
    s = q @ k.transpose(1, 2) / math.sqrt(dh)  # [H, Tq, Tk]
    if rel is not None:
        s = s + rel
    p = torch.softmax(s.masked_fill(~allowed, -math.inf), -1)
    return (p @ v).transpose(0, 1).reshape(Tq, D) @ W[name + ".wo"] + W[name + ".bo"]


def ffn(W, name, x, relu_inputs):
    h = x @ W[name + ".w1"] + W[name + ".b1"]
    relu_inputs.append(h.detach().flatten())
    return torch.relu(h) @ W[name + ".w2"] + W[name + ".b2"]


class Stacks:
    """One example's encoder and decoder, with what the fixture checks on
    the side: ReLU inputs and ACT's distances from its threshold."""

    def __init__(self, W, c):
        self.W, self.c = W, c
        self.relu, self.act_margin, self.ponder = [], [], []

    def rel(self, name, T, bidirectional):
        return rel_bias(self.W[name + ".rel"], T, bidirectional, self.c) if self.c["relative"] else None

    def enc_layer(self, i, x, heads):
        W, p = self.W, f"enc{i}"
        all_ = torch.ones(len(x), len(x), dtype=torch.bool)
        h = layer_norm(W, p + ".ln0", x)
        x = x + attention(W, p + ".self", h, h, heads, all_, self.rel(p + ".self", len(x), True))
        return x + ffn(W, p + ".ffn", layer_norm(W, p + ".ln1", x), self.relu)

    def dec_layer(self, i, y, mem, allowed):
        W, p, H = self.W, f"dec{i}", self.c["heads"]
        h = layer_norm(W, p + ".ln0", y)
        y = y + attention(W, p + ".self", h, h, H, allowed, self.rel(p + ".self", len(y), False))
        h = layer_norm(W, p + ".ln1", y)
        y = y + attention(W, p + ".cross", h, mem, H, torch.ones(len(y), len(mem), dtype=torch.bool))
        return y + ffn(W, p + ".ffn", layer_norm(W, p + ".ln2", y), self.relu)

    def stack(self, name, x, pos, layers, layer):
        """Embedded x through the stack's layers (Universal Transformer:
        one layer, ut_steps times, with ACT when configured)."""
        steps = self.c.get("ut_steps", 0)
        if not steps:
            x = x if pos is None else x + pos
            for i in range(layers):
                x = layer(i, x)
            return x
        if not self.c.get("act"):
            for t in range(steps):
                x = layer(0, self.timing(name, x, pos, t))
            return x
        N = len(x)
        hp, rem, nup = (torch.zeros(N, dtype=F64) for _ in range(3))
        out = torch.zeros_like(x)
        thr = 1 - ACT_EPS
        for t in range(steps):
            x = self.timing(name, x, pos, t)
            p = torch.sigmoid(x @ self.W[name + ".halt.w"] + self.W[name + ".halt.b"])[:, 0]
            running = (hp < 1).to(F64)
            total = hp + p * running
            self.act_margin.append((total - thr).abs()[running > 0].detach())
            halting = (total > thr).to(F64) * running
            keep = (total <= thr).to(F64) * running
            hp = hp + p * keep
            rem = rem + halting * (1 - hp)
            hp = hp + halting * rem
            nup = nup + keep + halting
            w = (p * keep + halting * rem)[:, None]
            x = layer(0, x)
            out = x * w + out * (1 - w)
        self.ponder.append(nup + rem)
        return out

    def timing(self, name, x, pos, t):
        x = x if pos is None else x + pos
        return x + self.W[f"{name}.step{t}"]

    def encode(self, src, heads, layers):
        c = self.c
        pos = None if c["relative"] else sinusoid(len(src), c["dim"])
        x = self.stack("enc", self.W["src_emb"][src], pos, layers, lambda i, x: self.enc_layer(i, x, heads))
        return layer_norm(self.W, "enc.ln", x)

    def decode(self, dec_in, mem):
        c = self.c
        pos = None if c["relative"] else sinusoid(len(dec_in), c["dim"])
        allowed = decoder_allowed(c["mask"], dec_in)
        y = self.stack("dec", self.W["tgt_emb"][dec_in], pos, c["layers"],
                       lambda i, y: self.dec_layer(i, y, mem, allowed))
        return layer_norm(self.W, "dec.ln", y) @ self.W["out.w"] + self.W["out.b"]


class TooClose(Exception):
    """A step function's input lies so near its step that float32 rounding
    could take the other side: the weights are drawn again."""


# Distance kept from ReLU's kink and ACT's threshold: above what the Go
# tests' bound allows a forward value of order one (rtol 4e-5 to 1e-4 for a
# whole step, forward and back; about half of that at a forward value), and
# a hundred times the float32 errors they observe.
MARGIN = 1e-4


def check_margins(st):
    if st.relu and torch.cat(st.relu).abs().min().item() < MARGIN:
        raise TooClose("a ReLU input")
    if st.act_margin and torch.cat(st.act_margin).min().item() < MARGIN:
        raise TooClose("an ACT sum")


def token_losses(logits, tgt, eps):
    lp = torch.log_softmax(logits, -1)
    return -(1 - eps) * lp[torch.arange(len(tgt)), tgt] - eps * lp.mean(-1)


def transformer_case(W, c, batch):
    """The loss, the training objective (plus ACT's ponder cost) and the
    logits of the real positions [tokens, V]."""
    L = 1 if c.get("ut_steps") else c["layers"]
    st = Stacks(W, c)
    losses, logits, enc_ponder, dec_ponder = [], [], [], []
    for src, tgt in batch:
        mem = st.encode(torch.tensor(src), c["heads"], L)
        if st.ponder:
            enc_ponder.append(st.ponder.pop())
        z = st.decode(torch.tensor([START] + tgt[:-1]), mem)
        if st.ponder:
            dec_ponder.append(st.ponder.pop())
        losses.append(token_losses(z, torch.tensor(tgt), SMOOTHING))
        logits.append(z)
    loss = torch.cat(losses).mean()
    objective = loss
    for pc in (enc_ponder, dec_ponder):
        if pc:
            objective = objective + ACT_WEIGHT * torch.cat(pc).mean()
    check_margins(st)
    return loss, objective, {"logits": torch.cat(logits)}

# ---------------------------------------------------------------- LSTM


def lstm_run(W, name, xs, reverse=False):
    """One LSTM layer over xs [T, In] from zero state."""
    H = W[name + ".b"].shape[0] // 4
    h, cell = torch.zeros(H, dtype=F64), torch.zeros(H, dtype=F64)
    out = [None] * len(xs)
    for t in (reversed(range(len(xs))) if reverse else range(len(xs))):
        z = torch.cat([xs[t], h]) @ W[name + ".w"] + W[name + ".b"]
        i, f, g, o = z.split(H)
        cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(cell)
        out[t] = h
    return torch.stack(out)


def copy_positions(src, y, V, vocab):
    """Source positions whose attention counts toward P(y)."""
    if y < V:
        tok = vocab["target"][y]
        return [j for j, s in enumerate(src) if s > UNK and vocab["source"][s] == tok]
    j0 = y - V
    return [j for j, s in enumerate(src) if j == j0 or (src[j0] != UNK and s == src[j0])]


def lstm_case(W, c, batch, vocab):
    V, copy = c["tgt_vocab"], c["variant"] == "lstm-copy"
    losses, logits, atts, gates = [], [], [], []
    S = max(len(s) for s, _ in batch)
    st = Stacks(W, c)
    for src, tgt in batch:
        x = W["src_emb"][torch.tensor(src)]
        if c["encoder"] == "transformer":
            mem = st.encode(torch.tensor(src), c["encoder_heads"], c["encoder_layers"])
        else:
            for l in range(c["layers"]):
                x = torch.cat([lstm_run(W, f"enc{l}.fwd", x), lstm_run(W, f"enc{l}.bwd", x, True)], -1)
            mem = x  # [S, 2H]
        dec_in = [y if y < V else UNK for y in [START] + tgt[:-1]]  # a copied token enters as <unk>
        emb = W["tgt_emb"][torch.tensor(dec_in)]
        h = emb
        for l in range(c["layers"]):
            h = lstm_run(W, f"dec{l}", h)
        q = h @ W["attn.wq"] + W["attn.b"]  # [T, H]
        a = torch.softmax(torch.tanh(q[:, None, :] + (mem @ W["attn.wk"])[None]) @ W["attn.v"], -1)  # [T, S]
        ctx = a @ mem
        z = torch.cat([h, ctx], -1) @ W["out.w"] + W["out.b"]  # [T, V]
        logits.append(z)
        atts.append(torch.nn.functional.pad(a, (0, S - len(src))))
        if not copy:
            losses.append(token_losses(z, torch.tensor(tgt), SMOOTHING))
            continue
        pg = torch.sigmoid(torch.cat([h, ctx, emb], -1) @ W["copy.w"] + W["copy.b"])[:, 0]  # [T]
        pv = torch.softmax(z, -1)
        P = []
        for t, y in enumerate(tgt):
            gen = pv[t, y] if y < V else 0.0
            P.append(pg[t] * gen + (1 - pg[t]) * a[t, copy_positions(src, y, V, vocab)].sum())
        losses.append(-torch.log(torch.stack(P)))
        gates.append(pg)
    loss = torch.cat(losses).mean()
    check_margins(st)
    out = {"logits": torch.cat(logits), "attention": torch.cat(atts)}
    if copy:
        out["p_gen"] = torch.cat(gates)
    return loss, loss, out

# ---------------------------------------------------------------- cases

TF_BASE = dict(layers=2, heads=2, dim=8, mlp_dim=16, dropout=0.0, relative=False, rel_buckets=8,
               rel_max_distance=16, separators=False, mask="causal", max_src_len=16, max_tgt_len=16,
               src_vocab=10, tgt_vocab=12)
TF_SRC = [[4, 5, 6, 7, 8, 9], [9, 8, 7, 6], [5, 5, 4, 6, 9, 8, 7]]
TF_PLAIN = [[4, 6, 8, 10, 11, 5, 2], [7, 9, 11, 4, 2], [10, 4, 2]]
# Program parts, each followed by SEP, then EOS; one row of three parts.
TF_SEP = [[4, 6, SEP, 8, 10, 11, SEP, EOS], [7, SEP, 9, SEP, 5, 4, SEP, EOS], [10, SEP, EOS]]
TF_CASES = [  # (name, config changes, seed)
    ("transformer", {}, 11),
    ("relative", dict(relative=True), 12),
    ("transformer-sep", dict(separators=True), 13),
    ("relative-sep", dict(relative=True, separators=True), 14),
    ("sep-full", dict(relative=True, separators=True, mask="sep-full"), 15),
    ("sep-to-sep-and-last", dict(relative=True, separators=True, mask="sep-to-sep-and-last"), 16),
    ("sep-to-last", dict(relative=True, separators=True, mask="sep-to-last"), 17),
    ("universal", dict(ut_steps=3), 18),
    ("universal-act", dict(ut_steps=4, act=True), 19),
]

LSTM_VOCAB = {"source": ["<pad>", "<start>", "<eos>", "<unk>", "a", "b", "c", "x", "y"],
              "target": ["<pad>", "<start>", "<eos>", "<unk>", "a", "b", "J", "K", "L"]}
LSTM_BASE = dict(layers=2, heads=1, dim=6, mlp_dim=12, dropout=0.0, relative=False, rel_buckets=32,
                 rel_max_distance=128, separators=False, mask="causal", max_src_len=16, max_tgt_len=16,
                 src_vocab=9, tgt_vocab=9, encoder="lstm")
LV = 9  # copy ids are LV + source position
LSTM_ATTN = [([4, 5, 3, 7, 6], [6, 4, 7, 8, 5, 2]), ([7, 8], [8, 2]), ([6, 4, 4, 5, 8, 7, 6], [5, 6, 2])]
# Copy ids: x first at 1 (also at 3), c at 4; y first at 0 (also at 4), the
# <unk> at 1 (itself only); b known to the target at both positions.
LSTM_COPY = [([4, 7, 5, 7, 6], [6, LV + 1, 4, LV + 4, EOS]), ([8, 3, 4, 6, 8, 5], [LV + 0, LV + 1, 5, 7, LV + 3, EOS]),
             ([5, 5], [5, 8, EOS])]
LSTM_CASES = [
    ("lstm-attention", dict(variant="lstm-attention"), LSTM_ATTN, 21),
    ("lstm-copy", dict(variant="lstm-copy"), LSTM_COPY, 22),
    ("lstm-copy-transformer-encoder", dict(variant="lstm-copy", encoder="transformer", encoder_layers=2,
                                           encoder_heads=2), LSTM_COPY, 23),
]


def write_case(outdir, name, c, batch, specs, seed, run, extra):
    """Draws the weights from seed, seed+1000, ... until no step function's
    input is TooClose, and writes the case."""
    for seed in range(seed, seed + 20000, 1000):
        W = draw(specs, seed)
        W64 = {k: v.double().requires_grad_() for k, v in W.items()}
        try:
            loss, objective, outs = run(W64)
            break
        except TooClose:
            continue
    else:
        raise RuntimeError(f"{name}: no seed kept every step function's input clear of its step")
    objective.backward()
    tensors = {"param." + k: v for k, v in W.items()}
    tensors.update({"grad." + k: v.grad.detach() for k, v in W64.items()})
    tensors.update({k: v.detach() for k, v in outs.items()})
    for k, v in tensors.items():
        assert torch.isfinite(v).all(), k
    save_safetensors(os.path.join(outdir, name + ".safetensors"), tensors)
    case = {"name": name, "config": c, "smoothing": SMOOTHING, "src": [s for s, _ in batch],
            "tgt": [t for _, t in batch], "loss": loss.item(), "objective": objective.item(), "seed": seed,
            "tensors": name + ".safetensors"}
    case.update(extra)
    return case


def write_index(outdir, about, cases):
    with open(os.path.join(outdir, "cases.json"), "w") as f:
        json.dump({"about": about, "pytorch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


def fixture(tdir, ldir):
    torch.set_num_threads(1)
    check_masks()
    for d in (tdir, ldir):
        os.makedirs(d, exist_ok=True)
    cases = []
    for name, edit, seed in TF_CASES:
        c = dict(TF_BASE, variant=name.removesuffix("-act"), **edit)
        batch = list(zip(TF_SRC, TF_SEP if c["separators"] else TF_PLAIN))
        cases.append(write_case(tdir, name, c, batch, transformer_specs(c), seed,
                                lambda W64: transformer_case(W64, c, batch), {}))
    write_index(tdir, "written by scripts/baseline_reference.py; loss without, objective with the ponder cost", cases)
    cases = []
    for name, edit, batch, seed in LSTM_CASES:
        c = dict(LSTM_BASE, **edit)
        cases.append(write_case(ldir, name, c, batch, lstm_specs(c), seed,
                                lambda W64: lstm_case(W64, c, batch, LSTM_VOCAB), {"vocab": LSTM_VOCAB}))
    write_index(ldir, "written by scripts/baseline_reference.py", cases)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fixture")
    f.add_argument("transformer_dir")
    f.add_argument("lstm_dir")
    a = ap.parse_args()
    fixture(a.transformer_dir, a.lstm_dir)


if __name__ == "__main__":
    main()
