#!/usr/bin/python3
"""Paired comparisons between any two arms of a finished experiment (report.md compares each arm with
the reference arm only).

    scripts/compare_arms.py RUN_ROOT A:B [A:B ...] [--curve]

For each pair, the final validation loss of A minus B over the seeds both finished, paired by seed
(same initialisation seed and data order): mean, the 95% Student-t interval, the sample sd and the
per-seed differences. --curve adds the difference of the seed-mean validation curves at each
evaluation step (how a gap develops during training). Reads RUN_ROOT/results.csv and each run's
metrics.jsonl; standard library only.
"""
import csv
import json
import math
import os
import sys
from collections import defaultdict

# 0.975 quantiles of Student's t for 1..10 degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def read(root):
    path = os.path.join(root, "results.csv")
    if not os.path.exists(path):
        sys.exit(f"error: {path} does not exist\n  fix: run `ffnshape experiment` on this run root first")
    finals, dirs = defaultdict(dict), defaultdict(list)
    for row in csv.DictReader(open(path)):
        if row["complete"] == "1":
            finals[row["arm"]][row["seed"]] = float(row["val_loss"])
            dirs[row["arm"]].append(row["run_dir"])
    return finals, dirs


def mean_curve(run_dirs):
    by_step = defaultdict(list)
    for d in run_dirs:
        for line in open(os.path.join(d, "metrics.jsonl")):
            record = json.loads(line)
            if "val_loss" in record:
                by_step[record["step"]].append(record["val_loss"])
    return {step: sum(v) / len(v) for step, v in by_step.items() if len(v) == len(run_dirs)}


def main():
    args = [a for a in sys.argv[1:] if a != "--curve"]
    if len(args) < 2 or any(":" not in a for a in args[1:]):
        sys.exit(__doc__)
    finals, dirs = read(args[0])
    for pair in args[1:]:
        a, b = pair.split(":", 1)
        for arm in (a, b):
            if arm not in finals:
                sys.exit(f"error: no finished run of arm '{arm}'\n  fix: use one of {', '.join(finals)}")
        diffs = [finals[a][s] - finals[b][s] for s in sorted(finals[a]) if s in finals[b]]
        n = len(diffs)
        mean = sum(diffs) / n
        line = f"{a} - {b}: {mean:+.4f}"
        if n >= 2:
            sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
            half = (T975[n - 2] if n - 1 <= len(T975) else 1.96) * sd / math.sqrt(n)
            line += f" [{mean - half:+.4f}, {mean + half:+.4f}] (95% CI, {n} seeds, sd {sd:.4f})"
        print(line + " per seed " + " ".join(f"{d:+.4f}" for d in diffs))
        if "--curve" in sys.argv:
            ca, cb = mean_curve(dirs[a]), mean_curve(dirs[b])
            print("  by step: " + " ".join(f"{s}:{ca[s] - cb[s]:+.3f}" for s in sorted(ca) if s in cb))


if __name__ == "__main__":
    main()
