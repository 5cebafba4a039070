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
T975 = [12.706204736432, 4.302652729911, 3.182446305284, 2.776445105198, 2.570581836615, 2.446911848792,
        2.36462425101, 2.306004135033, 2.262157162741, 2.228138851965, 2.200985160083, 2.178812829663,
        2.160368656461, 2.144786687917, 2.131449545559, 2.119905299221, 2.109815577833, 2.100922040241,
        2.093024054408, 2.085963447266, 2.079613844728, 2.073873067904, 2.068657610419, 2.063898561628,
        2.059538552753, 2.055529438643, 2.05183051648, 2.048407141795, 2.045229642133, 2.042272456301]


def read_results(root):
    path = os.path.join(root, "results.csv")
    if not os.path.exists(path):
        print(f"error: {path} does not exist\n  fix: run `ffnshape experiment` (or sweep) first", file=sys.stderr)
        sys.exit(2)
    with open(path) as f:
        return list(csv.DictReader(f))


def t975(dof):
    """The 0.975 quantile of Student's t (Cornish-Fisher beyond the table, within 1e-4, as report.cpp)."""
    if dof <= 30:
        return T975[dof - 1]
    z = 1.959963984540054
    return z + (z ** 3 + z) / (4 * dof) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * dof * dof)


def seeds_for_power(mean, sd, power_z=0.8416212335729143):
    """The seeds a paired comparison needs to resolve a true difference of |mean| with paired sd `sd`
    at 80% power (two-sided 5% t-test; the normal approximation of the noncentral t, within one seed
    of scipy's exact power). None when the gap or the sd is not positive."""
    if not (sd > 0 and abs(mean) > 0):
        return None
    effect = abs(mean) / sd
    n = 2
    while effect * math.sqrt(n) - t975(n - 1) < power_z and n < 100000:
        n += 1
    return n


def mean_half_width(values):
    """Mean and half-width of the 95% Student-t interval (0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, t975(n - 1) * sd / math.sqrt(n)


def final_losses(runs):
    """{seed: final validation loss} of an arm's finished runs."""
    return {r["seed"]: float(r["val_loss"]) for r in runs if r["complete"] == "1" and r["val_loss"]}
