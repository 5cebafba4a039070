#!/usr/bin/env python3
"""PyTorch reference for bench/train_speed.cpp: the same model and training step in Python.

Written from the equations of include/ffnshape/nn/*.h (not a port of the C++ code):

  RMSNorm      x / sqrt(mean(x^2) + eps) * w, in fp32, returned in x's dtype
  RoPE         half-split ("rotate half") layout, cos/sin tables in fp32 cast to x's dtype
  attention    q/k/v/o without bias, optional QK-norm over the whole q / k projection before the
               head split, GQA by repeating kv heads, causal SDPA through the library operator
               (F.scaled_dot_product_attention, as ffnshape/compat.h does)
  FFN stack    K residual SwiGLU sub-blocks, each with its own RMSNorm
  families     llama: h = x + Attn(N(x)),  r_k = r + down(silu(gate u) * up u), u = N_k(r)
               olmo2: h = x + N(Attn(x)),  r_k = r + N_k(down(silu(gate r) * up r))
  head         tied (linear with the embedding matrix) or untied; fp32 cross-entropy (+ z-loss)

Training step as src/train/trainer.cpp: AdamW in two groups (matrices decayed; norms and the
embedding not), forward under torch.autocast(device, bfloat16) for bf16, backward outside it,
global grad-norm clip 1.0, optimizer step. Tokens are drawn from a seeded Zipf unigram
distribution (learnable, so the loss visibly falls from log(vocab)); drawing them is not timed.

Usage: .venv/bin/python bench/torch_reference.py --config configs/demo/conventional.yaml \
           --batch 8 --seq-len 256 --steps 20 --warmup 3 --dtype fp32 --threads 2 [--device cuda] [--compile]
Prints one JSON line: {"tokens_per_s", "ms_per_step", "loss_first", "loss_last", ...}.
"""
import argparse
import os
import json
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml


# --- config ---------------------------------------------------------------------------------------

def load_optimizer_config(path):
    """The optimizer keys the step uses (defaults of include/ffnshape/config/train_config.h)."""
    with open(path) as f:
        o = (yaml.safe_load(f) or {}).get("optimizer") or {}
    return {"weight_decay": float(o.get("weight_decay", 0.1)), "betas": tuple(o.get("betas", (0.9, 0.95))),
            "eps": float(o.get("eps", 1e-8)), "clip": float(o.get("clip", 1.0)),
            "decay_embeddings": bool(o.get("decay_embeddings", False)), "decay_norms": bool(o.get("decay_norms", False))}


def load_model_config(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    m = dict(doc["model"])
    family = m.get("family", "llama")
    olmo = family == "olmo2"
    cfg = {
        "family": family,
        "vocab_size": 32000, "d_model": 768, "n_layers": 12, "n_heads": 12,
        "n_kv_heads": None, "head_dim": None,
        "qk_norm": olmo, "tie_embeddings": not olmo,
        "rope_theta": 500000.0 if olmo else 10000.0,
        "rope_scaling": None,
        "norm_eps": 1e-6 if olmo else 1e-5,
        "max_seq_len": 1024,
        "z_loss": 1e-5 if olmo else 0.0,
    }
    init = {"dist": "truncated_normal" if olmo else "normal", "std": 0.02, "depth_scaled": False}
    init.update(m.pop("init", None) or {})
    ffn = {"kind": "conventional", "hidden": None, "ratio": None, "k": 1, "multiple_of": 1, "widths": []}
    ffn.update(m.pop("ffn", None) or {})
    for key, value in m.items():
        if key not in cfg:
            raise SystemExit(f"error: {path}: model.{key}: unknown key")
        cfg[key] = value
    cfg["init"], cfg["ffn"] = init, ffn
    cfg["n_kv_heads"] = cfg["n_kv_heads"] or cfg["n_heads"]
    cfg["head_dim"] = cfg["head_dim"] or cfg["d_model"] // cfg["n_heads"]
    for key in ("rope_theta", "norm_eps", "z_loss"):
        cfg[key] = float(cfg[key])
    return cfg


def ffn_hidden(cfg, layer):
    f = cfg["ffn"]
    if f["widths"]:
        return int(f["widths"][layer])
    if f["hidden"] is not None:
        return int(f["hidden"])
    mult = int(f["multiple_of"])
    return max(int(math.floor(float(f["ratio"]) * cfg["d_model"] / mult + 0.5)) * mult, mult)


# --- model ----------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (normed * self.weight.float()).to(x.dtype)


def rope_inverse_frequencies(head_dim, theta, scaling):
    inv_freq = theta ** -(torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    if scaling:
        factor = float(scaling.get("factor", 8.0))
        low = float(scaling.get("low_freq_factor", 1.0))
        high = float(scaling.get("high_freq_factor", 4.0))
        orig = float(scaling.get("original_max_seq_len", 8192))
        wavelen = 2 * math.pi / inv_freq
        smooth = (orig / wavelen - low) / (high - low)
        interpolated = (1 - smooth) * inv_freq / factor + smooth * inv_freq
        scaled = torch.where(wavelen > orig / low, inv_freq / factor, interpolated)
        inv_freq = torch.where(wavelen < orig / high, inv_freq, scaled)
    return inv_freq.float()


class Rotary(nn.Module):
    def __init__(self, head_dim, max_seq_len, theta, scaling):
        super().__init__()
        inv_freq = rope_inverse_frequencies(head_dim, theta, scaling).double()
        angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), inv_freq)
        self.register_buffer("cos", angles.cos().float())
        self.register_buffer("sin", angles.sin().float())

    def forward(self, x):  # (batch, heads, seq, head_dim)
        seq = x.size(-2)
        c = self.cos[:seq].to(x.dtype)
        s = self.sin[:seq].to(x.dtype)
        x1, x2 = x.chunk(2, -1)
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)


def causal_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = cfg["n_heads"], cfg["n_kv_heads"], cfg["head_dim"]
        d, qw, kvw = cfg["d_model"], self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        self.q_proj = nn.Linear(d, qw, bias=False)
        self.k_proj = nn.Linear(d, kvw, bias=False)
        self.v_proj = nn.Linear(d, kvw, bias=False)
        self.o_proj = nn.Linear(qw, d, bias=False)
        self.qk_norm = cfg["qk_norm"]
        if self.qk_norm:
            self.q_norm = RMSNorm(qw, cfg["norm_eps"])
            self.k_norm = RMSNorm(kvw, cfg["norm_eps"])
        self.rope = Rotary(self.head_dim, cfg["max_seq_len"], cfg["rope_theta"], cfg["rope_scaling"])

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q = self.rope(q.view(b, t, self.n_heads, self.head_dim).transpose(1, 2))
        k = self.rope(k.view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2))
        v = v.view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        groups = self.n_heads // self.n_kv_heads
        if groups > 1:
            k = k.unsqueeze(2).expand(b, self.n_kv_heads, groups, t, self.head_dim).reshape(b, self.n_heads, t, self.head_dim)
            v = v.unsqueeze(2).expand(b, self.n_kv_heads, groups, t, self.head_dim).reshape(b, self.n_heads, t, self.head_dim)
        y = causal_attention(q, k, v)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))


class SwiGLUSubBlock(nn.Module):
    def __init__(self, d_model, hidden, family, eps):
        super().__init__()
        self.norm = RMSNorm(d_model, eps)
        self.gate = nn.Linear(d_model, hidden, bias=False)
        self.up = nn.Linear(d_model, hidden, bias=False)
        self.down = nn.Linear(hidden, d_model, bias=False)
        self.post = family == "olmo2"

    def forward(self, r):
        if self.post:
            return r + self.norm(self.down(F.silu(self.gate(r)) * self.up(r)))
        u = self.norm(r)
        return r + self.down(F.silu(self.gate(u)) * self.up(u))


class Block(nn.Module):
    def __init__(self, cfg, layer):
        super().__init__()
        self.attn_norm = RMSNorm(cfg["d_model"], cfg["norm_eps"])
        self.attn = Attention(cfg)
        hidden = ffn_hidden(cfg, layer)
        self.ffn = nn.ModuleList(
            SwiGLUSubBlock(cfg["d_model"], hidden, cfg["family"], cfg["norm_eps"]) for _ in range(int(cfg["ffn"]["k"])))
        self.post = cfg["family"] == "olmo2"

    def forward(self, x):
        h = x + self.attn_norm(self.attn(x)) if self.post else x + self.attn(self.attn_norm(x))
        for sub in self.ffn:
            h = sub(h)
        return h


class TransformerLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg["vocab_size"], cfg["d_model"])
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg["n_layers"]))
        self.norm = RMSNorm(cfg["d_model"], cfg["norm_eps"])
        self.lm_head = None if cfg["tie_embeddings"] else nn.Linear(cfg["d_model"], cfg["vocab_size"], bias=False)
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self):
        init = self.cfg["init"]
        std = float(init["std"])
        out_std = std / math.sqrt(2 * self.cfg["n_layers"]) if init["depth_scaled"] else std
        for name, p in self.named_parameters():
            if p.dim() == 1:
                p.fill_(1.0)
                continue
            s = out_std if ("o_proj" in name or "down" in name) else std
            if init["dist"] == "truncated_normal":
                nn.init.trunc_normal_(p, 0.0, s, -3 * s, 3 * s)
            else:
                p.normal_(0.0, s)

    def forward(self, idx, targets):
        x = self.tok_embeddings(idx)
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.tok_embeddings.weight)
        logits = logits.float().view(-1, logits.size(-1))
        flat = targets.reshape(-1)
        loss = F.cross_entropy(logits, flat, ignore_index=-1)
        if self.cfg["z_loss"] > 0:
            lse = torch.logsumexp(logits, -1).masked_select(flat.ne(-1))
            loss = loss + self.cfg["z_loss"] * lse.pow(2).mean()
        return loss


# --- training -------------------------------------------------------------------------------------

def make_optimizer(model, lr, oc):
    decayed, undecayed = [], []
    for name, p in model.named_parameters():
        is_norm = p.dim() == 1
        is_embedding = name.startswith("tok_embeddings")
        decay = (not is_norm or oc["decay_norms"]) and (not is_embedding or oc["decay_embeddings"])
        (decayed if decay else undecayed).append(p)
    return torch.optim.AdamW([{"params": decayed, "weight_decay": oc["weight_decay"]},
                              {"params": undecayed, "weight_decay": 0.0}], lr=lr, betas=oc["betas"], eps=oc["eps"])


def zipf_probs(vocab):
    return 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)


def load_train_config(path):
    """train.tf32 (default true, as include/ffnshape/config/train_config.h)."""
    with open(path) as f:
        t = (yaml.safe_load(f) or {}).get("train") or {}
    return {"tf32": bool(t.get("tf32", True))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--compile", action="store_true",
                    help="torch.compile the model (compilation happens in the untimed warmup steps)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--breakdown", action="store_true",
                    help="then run `steps` more steps with each phase timed; adds breakdown_ms to the JSON")
    args = ap.parse_args()

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    if cuda:
        # As the trainer: TF32 for fp32 products per train.tf32 (PyTorch's own default is off).
        torch.backends.cuda.matmul.allow_tf32 = load_train_config(args.config)["tf32"]
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    cfg = load_model_config(args.config)
    torch.manual_seed(args.seed)
    model = TransformerLM(cfg).to(device)
    model.train()
    oc = load_optimizer_config(args.config)
    clip = oc["clip"] if oc["clip"] > 0 else float("inf")
    opt = make_optimizer(model, args.lr, oc)  # PyTorch's default AdamW: for-each on CUDA, a loop on the CPU
    step_model = torch.compile(model) if args.compile else model
    bf16 = args.dtype == "bf16"
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    gen = torch.Generator().manual_seed(args.seed + 1)
    probs = zipf_probs(cfg["vocab_size"])

    def draw():
        tokens = torch.multinomial(probs, args.batch * (args.seq_len + 1), replacement=True, generator=gen)
        tokens = tokens.view(args.batch, args.seq_len + 1).to(device)
        return tokens[:, :-1], tokens[:, 1:]

    losses, times = [], []
    for step in range(args.warmup + args.steps):
        x, y = draw()
        sync()
        start = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = args.lr
        opt.zero_grad(set_to_none=False)  # as the C++ Optimizer::zero_grad() of the trainer
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            loss = step_model(x, y)
        loss.backward()
        step_loss = loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        sync()
        elapsed = time.perf_counter() - start

        losses.append(step_loss)
        if step >= args.warmup:
            times.append(elapsed)

    trace = os.environ.get("FFNSHAPE_BENCH_TRACE")
    if trace:  # chrome trace of a few steps, to compare operator times with the C++ side
        with torch.autograd.profiler.profile() as prof:
            for _ in range(3):
                x, y = draw()
                opt.zero_grad(set_to_none=False)
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                    loss = step_model(x, y)
                loss.backward()
                opt.step()
        prof.export_chrome_trace(trace)

    breakdown = {}
    if args.breakdown:
        for step in range(args.steps):
            x, y = draw()
            sync()
            t = [time.perf_counter()]

            def lap(name):
                sync()
                now = time.perf_counter()
                breakdown[name] = breakdown.get(name, 0.0) + 1000.0 * (now - t[0]) / args.steps
                t[0] = now
            for g in opt.param_groups:
                g["lr"] = args.lr
            opt.zero_grad(set_to_none=False)
            lap("zero_grad")
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                loss = step_model(x, y)
                lap("forward")
            lap("autocast_exit")
            loss.backward()
            lap("backward")
            loss.item()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            lap("clip")
            opt.step()
            lap("optimizer")

    total = sum(times)
    tokens_per_step = args.batch * args.seq_len
    print(json.dumps({
        "impl": "pytorch-compile" if args.compile else "pytorch", "torch": torch.__version__, "config": args.config,
        "dtype": args.dtype, "device": torch.cuda.get_device_name(device) if cuda else "cpu",
        "threads": torch.get_num_threads(), "batch": args.batch, "seq_len": args.seq_len, "steps": args.steps,
        "params": sum(p.numel() for p in model.parameters()),
        "tokens_per_s": tokens_per_step * len(times) / total,
        "ms_per_step": 1000.0 * total / len(times),
        "loss_first": losses[0], "loss_last": losses[-1],
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if cuda else 0,
        **({"breakdown_ms": {k: round(v, 3) for k, v in sorted(breakdown.items())}} if args.breakdown else {}),
    }))


if __name__ == "__main__":
    main()
