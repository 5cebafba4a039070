#!/usr/bin/env python3
"""PyTorch's own data parallelism for bench/ddp_speed.sh: bench/torch_reference.py's model (the same
equations as ffnshape's) wrapped in torch.nn.parallel.DistributedDataParallel over Gloo, one process
per rank, started by torchrun. Each rank trains on its own micro-batch of Zipf-distributed tokens
(drawing them is not timed); AdamW, clip 1.0, as the trainer.

Usage: torchrun --standalone --nproc_per_node=2 bench/ddp_reference.py --config configs/demo/conventional.yaml \
           --micro-batch 4 --seq-len 256 --steps 20 --warmup 5 --threads 1 [--bucket-mb 25]
Rank 0 prints one JSON line: {"tokens_per_s" (all ranks), "ms_per_step", "world_size", ...}.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_reference import TransformerLM, load_model_config, load_optimizer_config, make_optimizer, zipf_probs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--seq-len", type=int, default=256)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bucket-mb", type=float, default=25)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = load_model_config(args.config)
    oc = load_optimizer_config(args.config)
    torch.manual_seed(0)
    model = TransformerLM(cfg)
    model.train()
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    opt = make_optimizer(model, args.lr, oc)
    clip = oc["clip"] if oc["clip"] > 0 else float("inf")
    gen = torch.Generator().manual_seed(1 + rank)
    probs = zipf_probs(cfg["vocab_size"])

    times, losses = [], []
    for step in range(args.warmup + args.steps):
        tokens = torch.multinomial(probs, args.micro_batch * (args.seq_len + 1), replacement=True, generator=gen)
        tokens = tokens.view(args.micro_batch, args.seq_len + 1)
        x, y = tokens[:, :-1], tokens[:, 1:]
        start = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = ddp(x, y)
        loss.backward()
        # The global mean loss, as ffnshape reports it (and normalises by).
        reported = loss.detach().clone()
        dist.all_reduce(reported)
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        elapsed = time.perf_counter() - start
        losses.append(reported.item() / world)
        if step >= args.warmup:
            times.append(elapsed)
    if rank == 0:
        total = sum(times)
        print(json.dumps({
            "impl": "pytorch-ddp", "torch": torch.__version__, "config": args.config, "world_size": world,
            "threads": torch.get_num_threads(), "micro_batch": args.micro_batch, "seq_len": args.seq_len,
            "steps": args.steps, "bucket_mb": args.bucket_mb,
            "tokens_per_s": args.micro_batch * world * args.seq_len * len(times) / total,
            "ms_per_step": 1000.0 * total / len(times), "loss_first": losses[0], "loss_last": losses[-1],
        }))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
