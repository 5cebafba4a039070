#!/usr/bin/python3
"""Widths of every geometry rule (topo / gw / shift under raw, spherical and hyperbolic geometry) from
a pooled experiment's profile and from each of its single profiles, as a markdown table: the pooled
widths, each layer's range over the single profiles and the largest range in multiples of the config's
ffn.multiple_of. report.md does this for the experiment's own arms; this covers all nine rules.

    scripts/rule_spread.py RUN_ROOT --config CONFIG.yaml [--ffnshape build/ffnshape]

Calls `ffnshape schedule --json` on RUN_ROOT/profile.json and RUN_ROOT/profiles/*.json.
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def widths(ffnshape, config, rule, profile):
    out = subprocess.run([ffnshape, "schedule", "--config", config, "--rule", rule, "--profile", profile, "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: ffnshape schedule --rule {rule} --profile {profile}: {out.stderr.strip()}")
    return json.loads(out.stdout)["widths"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_root")
    parser.add_argument("--config", required=True, help="the experiment's base (uniform) config")
    parser.add_argument("--ffnshape", default="build/ffnshape")
    parser.add_argument("--multiple-of", type=int, default=32, help="the config's ffn.multiple_of")
    args = parser.parse_args()
    pooled = os.path.join(args.run_root, "profile.json")
    singles = sorted(glob.glob(os.path.join(args.run_root, "profiles", "*.json")))
    if not os.path.exists(pooled) or len(singles) < 2:
        sys.exit(f"error: {args.run_root} has no pooled profile\n  fix: run an experiment with profile: {{seeds: [...]}}")
    print(f"| rule | from the pool | range per layer over the {len(singles)} single profiles | largest change |")
    print("|---|---|---|---:|")
    for stat in ("topo", "gw", "shift"):
        for geometry in ("raw", "spherical", "hyperbolic"):
            rule = f"{stat}:{geometry}"
            each = [widths(args.ffnshape, args.config, rule, p) for p in singles]
            ranges = [(min(w[l] for w in each), max(w[l] for w in each)) for l in range(len(each[0]))]
            text = " ".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
            change = max(hi - lo for lo, hi in ranges) // args.multiple_of
            pool = " ".join(map(str, widths(args.ffnshape, args.config, rule, pooled)))
            print(f"| {rule} | {pool} | {text} | {change} x {args.multiple_of} |")


if __name__ == "__main__":
    main()
