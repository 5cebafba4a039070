#!/usr/bin/python3
"""Loss curves of one or more ffnshape runs, drawn to a PNG.

    scripts/plot_runs.py RUN_DIR [RUN_DIR ...] --out loss.png [--title TEXT]

Reads each run's metrics.jsonl: training loss per logged step (lines) and validation loss per eval
(markers). Uses Debian's python3-matplotlib (/usr/bin/python3).
"""
import argparse
import os
import sys

from experiment_stats import read_metrics  # scripts/ is on sys.path
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--title", default="training and validation loss")
    args = parser.parse_args()

    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for i, run in enumerate(args.runs):
        train, val = read_metrics(run)
        colour = f"C{i}"
        name = os.path.basename(os.path.normpath(run))
        if train:
            ax.plot(*zip(*train), color=colour, alpha=0.8, label=f"{name} train")
        if val:
            ax.plot(*zip(*val), "o--", color=colour, label=f"{name} val (final {val[-1][1]:.3f})")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats / token)")
    ax.set_title(args.title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
