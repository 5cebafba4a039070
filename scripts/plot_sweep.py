#!/usr/bin/python3
"""Validation perplexity of a sweep against its shape axes, drawn to RUN_ROOT/sweep.png.

    scripts/plot_sweep.py RUN_ROOT

Reads RUN_ROOT/results.csv (written by `ffnshape sweep`) and plots the mean perplexity over seeds of
every grid point against d_model / L (the hourglass paper's U-shaped curve), against K (sub-blocks
per layer) and against d_h / d_model, with one line per value of the other axes where that helps.
Uses Debian's python3-matplotlib (/usr/bin/python3).
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    root = sys.argv[1]
    path = os.path.join(root, "results.csv")
    if not os.path.exists(path):
        print(f"error: {path} does not exist\n  fix: run `ffnshape sweep` first", file=sys.stderr)
        sys.exit(2)
    points = defaultdict(list)
    shape = {}
    for row in csv.DictReader(open(path)):
        if row["complete"] != "1" or not row["val_ppl"]:
            continue
        points[row["arm"]].append(float(row["val_ppl"]))
        widths = [int(w) for w in row["ffn_widths"].split()] if row["ffn_widths"] else []
        d_h = sum(widths) / len(widths) if widths else float("nan")
        shape[row["arm"]] = (int(row["d_model"]), int(row["n_layers"]), int(row["k"]), d_h)
    if not points:
        print("no finished runs to plot yet")
        return
    ppl = {arm: sum(v) / len(v) for arm, v in points.items()}

    axes_spec = [("d_model / L", lambda s: s[0] / s[1], lambda s: f"K={s[2]}"),
                 ("K (sub-blocks per layer)", lambda s: s[2], lambda s: f"L={s[1]}"),
                 ("d_h / d_model", lambda s: s[3] / s[0], lambda s: f"K={s[2]}")]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, (label, x_of, group_of) in zip(axes, axes_spec):
        groups = defaultdict(list)
        for arm, value in ppl.items():
            groups[group_of(shape[arm])].append((x_of(shape[arm]), value))
        for name, xy in sorted(groups.items()):
            xy.sort()
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", label=name)
        ax.set_xlabel(label)
        ax.set_ylabel("validation perplexity")
        ax.grid(alpha=0.3)
        if len(groups) > 1:
            ax.legend(fontsize=8)
    fig.suptitle(f"{os.path.basename(os.path.normpath(root))}: perplexity across the grid")
    fig.tight_layout()
    out = os.path.join(root, "sweep.png")
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
