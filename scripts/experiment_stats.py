"""Statistics of an ffnshape experiment's run root, shared by plot_experiment.py and compare_arms.py
(standard library only): results.csv, each run's metrics.jsonl, and 95% Student-t intervals.
"""
import csv
import json
import math
import os
import sys


def metrics_entries(run_dir):
    """The objects of RUN/metrics.jsonl, in order (a torn last line of a killed run is left out)."""
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        sys.exit(f"error: {path} does not exist\n  fix: pass run directories written by 'ffnshape train'")
    entries = []
    with open(path) as f:
        for line in f:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return entries


def read_metrics(run_dir):
    """(train, val): lists of (step, loss) and (step, val_loss) from RUN/metrics.jsonl."""
    train, val = [], []
    for entry in metrics_entries(run_dir):
        if "loss" in entry:
            train.append((entry["step"], entry["loss"]))
        if "val_loss" in entry:
            val.append((entry["step"], entry["val_loss"]))
    return train, val


# 0.975 quantiles of Student's t for 1..30 degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def read_results(root):
    path = os.path.join(root, "results.csv")
    if not os.path.exists(path):
        print(f"error: {path} does not exist\n  fix: run `ffnshape experiment` (or sweep) first", file=sys.stderr)
        sys.exit(2)
    with open(path) as f:
        return list(csv.DictReader(f))


def mean_half_width(values):
    """Mean and half-width of the 95% Student-t interval (0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, (T975[n - 2] if n - 1 <= 30 else 1.96) * sd / math.sqrt(n)


def final_losses(runs):
    """{seed: final validation loss} of an arm's finished runs."""
    return {r["seed"]: float(r["val_loss"]) for r in runs if r["complete"] == "1" and r["val_loss"]}
