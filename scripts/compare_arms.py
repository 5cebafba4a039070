#!/usr/bin/python3
"""Paired comparisons between any two arms of a finished experiment (report.md compares each arm with
the reference arm only).

    scripts/compare_arms.py RUN_ROOT A:B [A:B ...] [--curve]

For each pair, the final validation loss of A minus B over the seeds both finished, paired by seed
(same initialisation seed and data order): mean, the 95% Student-t interval, the sample sd and the
per-seed differences, and how many seeds would resolve a gap of the measured size with 80% power
(paired t-test at 5%, from the measured paired sd). --curve adds the difference of the seed-mean validation curves at each
evaluation step (how a gap develops during training). Reads RUN_ROOT/results.csv and each run's
metrics.jsonl (experiment_stats.py); standard library only.
"""
import sys
from collections import defaultdict

from experiment_stats import final_losses, mean_half_width, read_metrics, read_results, seeds_for_power


def mean_curve(run_dirs):
    """{step: validation loss averaged over the runs} at the steps every run evaluated."""
    by_step = defaultdict(list)
    for d in run_dirs:
        for step, loss in read_metrics(d)[1]:
            by_step[step].append(loss)
    return {step: sum(v) / len(v) for step, v in by_step.items() if len(v) == len(run_dirs)}


def main():
    args = [a for a in sys.argv[1:] if a != "--curve"]
    if len(args) < 2 or any(":" not in a for a in args[1:]):
        sys.exit(__doc__)
    arms = defaultdict(list)
    for row in read_results(args[0]):
        arms[row["arm"]].append(row)
    finals = {arm: final_losses(rows) for arm, rows in arms.items()}
    dirs = {arm: [r["run_dir"] for r in rows if r["complete"] == "1"] for arm, rows in arms.items()}
    for pair in args[1:]:
        a, b = pair.split(":", 1)
        for arm in (a, b):
            if not finals.get(arm):
                sys.exit(f"error: no finished run of arm '{arm}'\n  fix: use one of {', '.join(finals)}")
        diffs = [finals[a][s] - finals[b][s] for s in sorted(finals[a]) if s in finals[b]]
        n = len(diffs)
        mean, half = mean_half_width(diffs)
        line = f"{a} - {b}: {mean:+.4f}"
        if n >= 2:
            sd = (sum((d - mean) ** 2 for d in diffs) / (n - 1)) ** 0.5
            line += f" [{mean - half:+.4f}, {mean + half:+.4f}] (95% CI, {n} seeds, sd {sd:.4f})"
        line += " per seed " + " ".join(f"{d:+.4f}" for d in diffs)
        if n >= 2 and seeds_for_power(mean, sd):
            line += f"; seeds for 80% power at this gap: {seeds_for_power(mean, sd)}"
        print(line)
        if "--curve" in sys.argv:
            ca, cb = mean_curve(dirs[a]), mean_curve(dirs[b])
            print("  by step: " + " ".join(f"{s}:{ca[s] - cb[s]:+.3f}" for s in sorted(ca) if s in cb))


if __name__ == "__main__":
    main()
