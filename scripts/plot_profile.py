#!/usr/bin/python3
"""Per-layer geometric work of a model (from `ffnshape profile`), and width schedules, drawn to a PNG.

    scripts/plot_profile.py PROFILE.json [--schedule widths.json ...] --out profile.png [--title TEXT] [--dpi N]

Rows of the figure:
  - one row per statistic in the profile (shift, gw, topo), one column per geometry (raw, spherical,
    hyperbolic): the work of every layer's FFN (x = layer). Only the statistics and geometries the profile
    holds are drawn. A panel whose values span more than two orders of magnitude uses a log scale. Where
    the profile has perturbation sensitivities, each panel notes the Spearman rank correlation between
    that work profile and the sensitivity (ablate first);
  - if the profile has them: loss sensitivity per layer (one line per perturbation), residual-stream norms
    entering and leaving the FFN, and the TwoNN intrinsic dimension of the clouds entering and leaving it;
  - if schedules are given (JSON from `ffnshape schedule --out`): the width of every layer relative to the
    uniform width, one line per schedule (legend = rule), and, if the profile has them, the local
    additivity ratios (joint loss change of two adjacent layers over the sum of their separate changes).

Exit codes: 0 success, 2 a missing, unreadable or invalid input file (or bad arguments). Uses Debian's
python3-matplotlib (/usr/bin/python3).
"""
import argparse
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STATISTICS = ["shift", "gw", "topo"]
GEOMETRIES = ["raw", "spherical", "hyperbolic"]
STAT_NAMES = {"shift": "shift", "gw": "Gromov-Wasserstein", "topo": "topological (H1)"}
STAT_UNITS = {"shift": "mean d(x_i, y_i)", "gw": "GW discrepancy", "topo": "W2 between H1 diagrams"}


def fail(message, fix):
    print(f"error: {message}\n  fix: {fix}", file=sys.stderr)
    sys.exit(2)


def read_json(path, expected_format, producer):
    if not os.path.exists(path):
        fail(f"{path} does not exist", f"pass a file written by '{producer} --out'")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {path}: {e}", "check the path and its permissions")
    except json.JSONDecodeError as e:
        fail(f"{path} is not valid JSON ({e})", f"write it again with '{producer} --out'")
    if not isinstance(data, dict) or data.get("format") != expected_format:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        fail(f"{path} is not an {expected_format} file (format: {got!r})", f"pass a file written by '{producer} --out'")
    return data


def ordered(keys, canonical):
    """Known names in their canonical order, then any others alphabetically."""
    return [k for k in canonical if k in keys] + sorted(k for k in keys if k not in canonical)


def number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def read_profile(path):
    p = read_json(path, "ffnshape-profile", "ffnshape profile")
    layers = p.get("layers")
    if not isinstance(layers, list) or not layers or not all(isinstance(x, dict) for x in layers):
        fail(f"{path} has no per-layer entries ('layers')", "profile the model again with 'ffnshape profile'")
    if not all(isinstance(x.get("layer", 0), int) for x in layers):
        fail(f"{path} has a non-integer 'layer' index", "profile the model again with 'ffnshape profile'")
    layers = sorted(layers, key=lambda x: x.get("layer", 0))
    p["layers"] = layers
    p["x"] = [x.get("layer", i) for i, x in enumerate(layers)]
    stats, geoms = set(), set()
    for entry in layers:
        work = entry.get("work")
        for stat, by_geometry in (work.items() if isinstance(work, dict) else []):
            if isinstance(by_geometry, dict):
                stats.add(stat)
                geoms.update(by_geometry)
    p["stats"] = ordered(stats, STATISTICS)
    p["geoms"] = ordered(geoms, GEOMETRIES)
    return p


def read_schedule(path):
    s = read_json(path, "ffnshape-schedule", "ffnshape schedule")
    widths, uniform = s.get("widths"), s.get("uniform_width")
    if not isinstance(widths, list) or not widths or not isinstance(uniform, (int, float)) or uniform <= 0:
        fail(f"{path} lacks 'widths' or a positive 'uniform_width'", "write it again with 'ffnshape schedule --out'")
    if not all(isinstance(w, (list, int, float)) for w in widths):
        fail(f"{path} has non-numeric widths", "write it again with 'ffnshape schedule --out'")
    # Hourglass schedules may give several widths per layer; draw their sum per layer.
    s["relative"] = [(sum(w) if isinstance(w, list) else w) / uniform for w in widths]
    return s


def series(layers, *keys):
    out = []
    for entry in layers:
        value = entry
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        out.append(number(value))
    return out


def set_scale(ax, values):
    """Log scale when the values span more than two orders of magnitude (symmetric log if some are <= 0)."""
    finite = [v for v in values if math.isfinite(v)]
    positive = sorted(abs(v) for v in finite if v != 0)
    if len(positive) < 2 or positive[-1] / positive[0] <= 100:
        return
    if min(finite) > 0:
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=positive[len(positive) // 4])


def style(ax, x, xlabel=True):
    ax.grid(alpha=0.3)
    ax.set_xticks(x if len(x) <= 16 else x[:: max(1, len(x) // 8)])
    if xlabel:
        ax.set_xlabel("layer")


def spearman_note(profile, stat, geom):
    rho = profile.get("spearman") or {}
    keys = [k for k in rho if k.startswith(f"{stat}:{geom}|")]
    if not keys:
        return ""
    keys.sort(key=lambda k: (not k.endswith("|ablate"), k))
    key = keys[0]
    return f"\nSpearman vs {key.split('|', 1)[1]} sensitivity: {number(rho[key]):+.2f}"


def work_panels(fig, grid, profile, row0):
    x = profile["x"]
    for r, stat in enumerate(profile["stats"]):
        for c, geom in enumerate(profile["geoms"]):
            ax = fig.add_subplot(grid[row0 + r, c])
            values = series(profile["layers"], "work", stat, geom)
            ax.plot(x, values, "o-", color=f"C{r}")
            set_scale(ax, values)
            ax.set_title(f"{STAT_NAMES.get(stat, stat)} / {geom}{spearman_note(profile, stat, geom)}", fontsize=10)
            if c == 0:
                ax.set_ylabel(STAT_UNITS.get(stat, "work"), fontsize=9)
            style(ax, x, xlabel=r == len(profile["stats"]) - 1)


def diagnostic_panels(profile):
    """Drawing functions for the diagnostics the profile holds: sensitivity, residual norms, d_int."""
    x, layers = profile["x"], profile["layers"]
    panels = []
    perturbations = ordered({k for e in layers if isinstance(e.get("sensitivity"), dict) for k in e["sensitivity"]},
                            ["ablate"])
    if perturbations:
        def sensitivity(ax):
            values = []
            for i, name in enumerate(perturbations):
                v = series(layers, "sensitivity", name)
                values += v
                ax.plot(x, v, "o-", color=f"C{i}", label=name)
            set_scale(ax, values)
            base = profile.get("base_loss")
            extra = f" (base loss {base:.3f})" if isinstance(base, (int, float)) else ""
            ax.set_title("loss sensitivity" + extra, fontsize=10)
            ax.set_ylabel("validation loss increase", fontsize=9)
            ax.legend(fontsize=8)
        panels.append(sensitivity)
    for key, title, ylabel in (("residual_norm", "residual-stream norm", "mean |h|"),
                               ("intrinsic_dimension", "intrinsic dimension (TwoNN)", "d_int")):
        if any(isinstance(e.get(key), dict) and e.get(key) for e in layers):
            def draw(ax, key=key, title=title, ylabel=ylabel):
                ax.plot(x, series(layers, key, "in"), "o-", color="C0", label="entering FFN (X_l)")
                ax.plot(x, series(layers, key, "out"), "s--", color="C3", label="leaving FFN (Y_l)")
                ax.set_title(title, fontsize=10)
                ax.set_ylabel(ylabel, fontsize=9)
                ax.legend(fontsize=8)
            panels.append(draw)
    return panels


def schedule_panels(fig, grid, profile, schedules, row, columns):
    has_additivity = bool(profile.get("additivity"))
    span = columns - 1 if has_additivity and columns > 1 else columns
    if schedules:
        ax = fig.add_subplot(grid[row, :span])
        names = [s.get("rule", "?") for s, _ in schedules]
        xs = []
        for i, (s, path) in enumerate(schedules):
            name = s.get("rule", "?")
            if names.count(name) > 1:
                name += f" ({os.path.basename(path)})"
            x = list(range(len(s["relative"])))
            xs = x if len(x) > len(xs) else xs
            ax.plot(x, s["relative"], "o-", color=f"C{i}", label=name)
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        uniform = {s["uniform_width"] for s, _ in schedules}
        unit = f"{uniform.pop()}" if len(uniform) == 1 else "each file's uniform width"
        ax.set_title(f"FFN width per layer relative to the uniform width ({unit})", fontsize=10)
        ax.set_ylabel("width / uniform", fontsize=9)
        ax.legend(fontsize=8, ncol=min(3, len(schedules)))
        style(ax, xs)
    if has_additivity:
        ax = fig.add_subplot(grid[row, span:] if schedules else grid[row, 0])
        entries = [a for a in profile["additivity"] if isinstance(a, dict) and isinstance(a.get("layers"), list)
                   and len(a["layers"]) == 2 and all(isinstance(v, int) for v in a["layers"])]
        kinds = ordered({a.get("perturbation", "?") for a in entries}, ["ablate"])
        for i, kind in enumerate(kinds):
            pts = sorted((a["layers"][0] + 0.5, number(a.get("ratio"))) for a in entries
                         if a.get("perturbation", "?") == kind)
            ax.plot(*zip(*pts), "o-", color=f"C{i}", label=kind)
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        ax.set_title("local additivity (layers l, l+1)", fontsize=10)
        ax.set_ylabel("joint / sum of separate", fontsize=9)
        ax.set_xlabel("layer pair midpoint")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)


def title_of(profile, path):
    prov = profile.get("provenance") or {}
    settings = profile.get("settings") or {}
    where = prov.get("checkpoint") or path
    parts = [f"{profile.get('n_layers', len(profile['layers']))} layers"]
    if "step" in prov:
        parts.append(f"step {prov['step']}")
    if "tokens" in settings:
        parts.append(f"N = {settings['tokens']} tokens")
    if "radius" in settings and "hyperbolic" in profile["geoms"]:
        parts.append(f"hyperbolic r = {settings['radius']}")
    return f"FFN geometric work per layer: {where}\n" + ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", help="profile JSON written by 'ffnshape profile'")
    parser.add_argument("--schedule", nargs="+", action="extend", default=[], metavar="JSON",
                        help="schedule JSON files written by 'ffnshape schedule --out' (repeatable)")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument("--title", help="figure title (default: the profiled checkpoint and settings)")
    parser.add_argument("--dpi", type=int, default=100)
    args = parser.parse_args()

    profile = read_profile(args.profile)
    schedules = [(read_schedule(path), path) for path in args.schedule]
    if not profile["stats"] or not profile["geoms"]:
        fail(f"{args.profile} has no work values", "profile with at least one --stats and one --geometries entry")

    diagnostics = diagnostic_panels(profile)
    has_last_row = bool(schedules) or bool(profile.get("additivity"))
    rows = len(profile["stats"]) + int(bool(diagnostics)) + int(has_last_row)
    columns = max(len(profile["geoms"]), len(diagnostics), 2 if schedules and profile.get("additivity") else 1)

    height = 3.0 * rows + 0.5
    fig = plt.figure(figsize=(max(4.2 * columns, 7.0), height), dpi=args.dpi)
    grid = fig.add_gridspec(rows, columns)
    work_panels(fig, grid, profile, 0)
    row = len(profile["stats"])
    if diagnostics:
        for c, draw in enumerate(diagnostics):
            ax = fig.add_subplot(grid[row, c])
            draw(ax)
            style(ax, profile["x"])
        row += 1
    if has_last_row:
        schedule_panels(fig, grid, profile, schedules, row, columns)
    fig.suptitle(args.title or title_of(profile, args.profile), fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.25 / height))  # leave the two-line title its room
    try:
        fig.savefig(args.out)
    except OSError as e:
        fail(f"cannot write {args.out}: {e}", "check that its folder exists and is writable")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
