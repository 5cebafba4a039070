#!/usr/bin/env python3
"""Sums tests/fuzz/fuzz_log.tsv per target into the Markdown table of docs/building.md.

A row's seconds are what the target ran; '?' marks early runs stopped by a finding whose time was
not recorded (they count as runs and findings, not as time). A row's result is clean, finding, or
load-timeout: the 1 s hang limit hit by an input that runs in milliseconds alone (a stall of the
machine, not of the parser; it counts as time, not as a finding).
"""
import collections
import csv
import os
import sys


def main(path):
    totals = collections.OrderedDict()
    with open(path, newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            t = totals.setdefault(row["target"], dict(seconds=0, unrecorded=0, runs=0, sessions=0,
                                                      findings=0, cov=0, ft=0, corpus=0))
            t["sessions"] += 1
            if row["seconds"].isdigit():
                t["seconds"] += int(row["seconds"])
            else:
                t["unrecorded"] += 1
            t["runs"] += int(row["runs"])
            t["findings"] += row["result"] == "finding"
            # Coverage grows over runs; the latest row holds the corpus as it now is.
            t["cov"], t["ft"] = max(t["cov"], int(row["cov"])), max(t["ft"], int(row["ft"]))
    print("| target | fuzzed (min) | runs | executions | edges (cov) | features (ft) | corpus files | runs ending in a finding |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    corpus_root = os.path.join(os.path.dirname(os.path.abspath(path)), "corpus")
    for name, t in totals.items():
        corpus = os.path.join(corpus_root, name)  # as committed now (minimised since the last run)
        t["corpus"] = len(os.listdir(corpus)) if os.path.isdir(corpus) else 0
        minutes = f"{t['seconds'] / 60:.1f}"
        if t["unrecorded"]:
            minutes += f" + {t['unrecorded']} unrecorded"
        print(f"| `{name}` | {minutes} | {t['sessions']} | {t['runs']:,} | {t['cov']:,} | {t['ft']:,} | "
              f"{t['corpus']} | {t['findings']} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/fuzz_log.tsv")
