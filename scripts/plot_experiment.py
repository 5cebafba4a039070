#!/usr/bin/python3
"""Plots of an ffnshape experiment or sweep, drawn to PNGs in its run root.

    scripts/plot_experiment.py RUN_ROOT [--reference ARM]

Reads RUN_ROOT/results.csv (written by `ffnshape experiment` / `ffnshape sweep`) and each run's
metrics.jsonl, and writes:
  val_curves.png   validation loss against step, one colour per arm (mean over seeds, seeds faint)
  final_loss.png   final validation loss per arm: mean with its 95% Student-t interval over seeds
  paired_diff.png  with --reference: each arm's final loss minus the reference's, paired by seed,
                   mean with its 95% Student-t interval (an interval clear of 0 is resolved)
Uses Debian's python3-matplotlib (/usr/bin/python3).
"""
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from experiment_stats import final_losses, mean_half_width, read_metrics, read_results  # noqa: E402



def val_curve(run_dir):
    """(step, val_loss) of a run; empty for a run that has not started."""
    if not os.path.exists(os.path.join(run_dir, "metrics.jsonl")):
        return []
    return read_metrics(run_dir)[1]


def plot_paired(root, arms, reference):
    ref = final_losses(arms.get(reference, []))
    names, means, halves, counts = [], [], [], []
    for arm, runs in arms.items():
        if arm == reference:
            continue
        own = final_losses(runs)
        diffs = [own[s] - ref[s] for s in own if s in ref]
        if diffs:
            mean, half = mean_half_width(diffs)
            names.append(arm), means.append(mean), halves.append(half), counts.append(len(diffs))
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.6))
    y = list(range(len(names)))[::-1]
    ax.errorbar(means, y, xerr=halves, fmt="o", capsize=4, color="C0")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{n} ({c} pair{'s' if c > 1 else ''})" for n, c in zip(names, counts)])
    ax.set_xlabel(f"final validation loss - {reference} (paired by seed, mean, 95% CI)")
    ax.set_title(f"{os.path.basename(os.path.normpath(root))}: difference to {reference}")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "paired_diff.png"), dpi=110)
    plt.close(fig)
    return True


def main():
    args = sys.argv[1:]
    reference = None
    if len(args) == 3 and args[1] == "--reference":
        reference = args[2]
        args = args[:1]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = args[0]
    rows = read_results(root)
    arms = OrderedDict()
    for row in rows:
        arms.setdefault(row["arm"], []).append(row)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (arm, runs) in enumerate(arms.items()):
        colour = f"C{i % 10}"
        curves = [val_curve(r["run_dir"]) for r in runs]
        curves = [c for c in curves if c]
        for c in curves:
            ax.plot([s for s, _ in c], [v for _, v in c], color=colour, alpha=0.25, linewidth=0.8)
        if curves:
            steps = sorted(set.intersection(*[set(s for s, _ in c) for c in curves]))
            mean = [sum(dict(c)[s] for c in curves) / len(curves) for s in steps]
            ax.plot(steps, mean, color=colour, marker="o", markersize=3, label=f"{arm} ({len(curves)} seeds)")
    ax.set_xlabel("step")
    ax.set_ylabel("validation loss")
    ax.set_title(f"{os.path.basename(os.path.normpath(root))}: validation loss")
    ax.grid(alpha=0.3)
    if arms:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "val_curves.png"), dpi=110)
    plt.close(fig)

    names, means, halves = [], [], []
    for arm, runs in arms.items():
        losses = list(final_losses(runs).values())
        if not losses:
            continue
        mean, half = mean_half_width(losses)
        names.append(arm)
        means.append(mean)
        halves.append(half)
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(names) + 2), 4.5))
    ax.bar(range(len(names)), means, yerr=halves, capsize=5, color=[f"C{i % 10}" for i in range(len(names))])
    if means:
        low = min(m - h for m, h in zip(means, halves))
        high = max(m + h for m, h in zip(means, halves))
        pad = max(0.02, 0.5 * (high - low))
        ax.set_ylim(low - pad, high + pad)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, ha="right")
    ax.set_ylabel("final validation loss (mean, 95% CI)")
    ax.set_title("final validation loss per arm")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "final_loss.png"), dpi=110)
    plt.close(fig)
    paired = reference is not None and plot_paired(root, arms, reference)
    print(f"wrote {os.path.join(root, 'val_curves.png')}, {os.path.join(root, 'final_loss.png')}"
          + (f" and {os.path.join(root, 'paired_diff.png')}" if paired else ""))


if __name__ == "__main__":
    main()
