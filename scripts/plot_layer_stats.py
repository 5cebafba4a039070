#!/usr/bin/python3
"""Per-layer statistics of one or more ffnshape runs over training, drawn to a PNG.

    scripts/plot_layer_stats.py RUN_DIR [RUN_DIR ...] --out layers.png [--stats NAME,...] [--title TEXT]

Reads the "layers" entries that log.layer_stats_every writes to each run's metrics.jsonl. One column
per run (the arms of an experiment side by side: runs/NAME/ARM/seed-1), one row per statistic with a
shared logarithmic y axis, one line per layer coloured from the first layer (dark) to the last
(light). Uses Debian's python3-matplotlib (/usr/bin/python3).
"""
import argparse
import math
import os
import sys

from experiment_stats import metrics_entries  # scripts/ is on sys.path
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STATS = {
    "resid_in_rms": "residual stream RMS into the block",
    "resid_out_rms": "residual stream RMS out of the block",
    "attn_out_rms": "attention output RMS",
    "ffn_out_rms": "FFN output RMS",
    "attn_grad_norm": "attention gradient norm",
    "ffn_grad_norm": "FFN gradient norm",
    "attn_update_ratio": "attention update / weight",
    "ffn_update_ratio": "FFN update / weight",
}


def read_layer_stats(run):
    """(steps, {name: [[value per layer] per step]}) from RUN/metrics.jsonl's "layers" entries."""
    steps, stats = [], {}
    for entry in metrics_entries(run):
        if "layers" in entry:
            steps.append(entry["step"])
            for name, per_layer in entry["layers"].items():
                stats.setdefault(name, []).append(per_layer)
    if not steps:
        sys.exit(f"plot_layer_stats: {run}/metrics.jsonl holds no layer statistics\n"
                 "  fix: train with log.layer_stats_every: N (--set log.layer_stats_every=50)")
    return steps, stats


def run_label(run, runs):
    """The part of a run's path that tells it from the others (runs/demo/topo/seed-1 -> topo/seed-1)."""
    paths = [os.path.abspath(r) for r in runs]
    if len(paths) == 1:
        return os.path.basename(paths[0])
    return os.path.relpath(os.path.abspath(run), os.path.commonpath(paths))


def positive(values):
    return [v if v is not None and math.isfinite(v) and v > 0 else float("nan") for v in values]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="run directories")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--stats", default=",".join(STATS), help="statistics to draw, comma-separated (default: all)")
    parser.add_argument("--title", default="per-layer statistics over training")
    args = parser.parse_args()
    names = [name for name in args.stats.split(",") if name]
    unknown = [name for name in names if name not in STATS]
    if unknown:
        sys.exit(f"plot_layer_stats: unknown statistic {unknown}\n  fix: choose from {','.join(STATS)}")

    runs = [(run, *read_layer_stats(run)) for run in args.runs]
    fig, axes = plt.subplots(len(names), len(runs), figsize=(4.2 * len(runs) + 1.2, 2.3 * len(names)), dpi=110,
                             sharex="col", sharey="row", squeeze=False)
    for column, (run, steps, stats) in enumerate(runs):
        label = run_label(run, args.runs)
        axes[0][column].set_title(label, fontsize=10)
        for row, name in enumerate(names):
            ax = axes[row][column]
            per_step = stats.get(name, [])
            layers = len(per_step[0]) if per_step else 0
            colours = plt.cm.viridis([i / max(layers - 1, 1) * 0.9 for i in range(layers)])
            for layer in range(layers):
                ax.plot(steps, positive([values[layer] for values in per_step]), color=colours[layer], lw=1.2,
                        label=f"layer {layer}")
            ax.set_yscale("log")
            ax.grid(alpha=0.3, which="both")
            if column == 0:
                ax.set_ylabel(STATS[name], fontsize=8)
            if row == len(names) - 1:
                ax.set_xlabel("step")
            if row == 0 and column == len(runs) - 1 and layers:
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
