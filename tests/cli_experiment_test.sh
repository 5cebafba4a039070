#!/usr/bin/env bash
# End-to-end checks of `ffnshape experiment`: a tiny 2 arms x 2 seeds experiment on a generated corpus,
# interrupted midway and rerun (only the missing work is done), the report against the runs'
# summary.json files, the geometry pipeline (train, profile, schedule, train), and malformed files.
# Environment: FFNSHAPE (the binary), SOURCE_DIR (the source tree, for the shipped files).
set -uo pipefail
source "$(dirname "$0")/cli_lib.sh"

python3 "$(dirname "$0")/llmc_shards.py" "$tmp" 6000

cat >"$tmp/base.yaml" <<YAML
model: {vocab_size: 64, d_model: 32, n_layers: 3, n_heads: 4, max_seq_len: 32, ffn: {hidden: 64}}
data: {train: "$tmp/train_*.bin", val: "$tmp/val_*.bin"}
train: {seq_len: 32, micro_batch: 4, steps: 40, threads: 1}
optimizer: {lr: 3.0e-3, warmup_steps: 3}
eval: {every: 20, batches: 2}
checkpoint: {every: 10, keep: 2}
log: {every: 10}
YAML

cat >"$tmp/two.yaml" <<YAML
name: two
base: base.yaml
set: [train.steps=300]
seeds: [1, 2]
budget: {reference: conventional, tolerance: 0.02}
arms:
  - name: conventional
  - name: hourglass
    set: [model.ffn.kind=hourglass, model.ffn.k=2]
    solve: [d_model=16..64, ffn.hidden=4..64]
YAML

# --dry-run: solved dimensions, split and error; nothing trained.
expect 0 "dry run" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two" --dry-run
contains "solved d_model" "$out" "dry run shows the solved dimensions"
contains "attention" "$out" "dry run shows the attention / ffn split"
[ ! -e "$tmp/two" ] || fail "dry run created the run root"
# --set overrides every arm after the file's own: both arms get 2 layers; an unknown key is exit 2.
expect 0 "dry run with --set" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two" --dry-run \
  --set model.n_layers=2
[ "$(grep -c ", 2 layers," <<<"$out")" = 2 ] || fail "--set model.n_layers=2 in both arms: $out"
expect 2 "--set with an unknown key" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two" --dry-run \
  --set train.bogus=1
contains "train.bogus" "$err" "--set unknown key message"

# Interrupt the experiment while the second run trains, then rerun it.
stopped_when "$tmp/two/conventional/seed-2/checkpoints/step_*/DONE" "$tmp/first.log" "interrupted experiment" -- \
  "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['complete']" "$tmp/two/conventional/seed-1/summary.json" ||
  fail "the first run is complete before the interruption"
[ ! -e "$tmp/two/hourglass/seed-1" ] || fail "the experiment went on after the interruption"
before=$(md5sum "$tmp/two/conventional/seed-1/metrics.jsonl")

expect 0 "rerun finishes the experiment" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two"
contains "conventional seed 1: finished earlier, skipped" "$err$out" "rerun skips the finished run"
contains "resuming from" "$err$out" "rerun resumes the interrupted run"
[ "$before" = "$(md5sum "$tmp/two/conventional/seed-1/metrics.jsonl")" ] || fail "the finished run was touched"
expect 0 "third run does nothing new" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two"
[[ "$err$out" != *"->"* ]] || fail "a finished experiment trained again"

# The report's numbers are the runs' own.
python3 - "$tmp/two" <<'PY' || fail "results.csv / report.md against summary.json"
import csv, json, math, statistics, sys
root = sys.argv[1]
rows = list(csv.DictReader(open(root + "/results.csv")))
assert sorted((r["arm"], r["seed"]) for r in rows) == [("conventional", "1"), ("conventional", "2"),
                                                         ("hourglass", "1"), ("hourglass", "2")], rows
report = open(root + "/report.md").read()
by_arm = {}
for r in rows:
    s = json.load(open(r["run_dir"] + "/summary.json"))
    assert r["complete"] == "1" and int(r["steps"]) == s["steps"] == 300, r
    assert abs(float(r["val_loss"]) - s["val_loss"]) < 1e-6, (r, s)
    assert abs(float(r["tokens_per_s"]) - s["tokens_per_s"]) < 0.1, (r, s)
    assert int(r["params_total"]) == s["params"]["total"], (r, s["params"])
    by_arm.setdefault(r["arm"], {})[r["seed"]] = s["val_loss"]
for arm, losses in by_arm.items():
    mean = statistics.mean(losses.values())
    assert f"{mean:.4f} ± {statistics.stdev(losses.values()):.4f}" in report, (arm, mean, report)
d = [by_arm["hourglass"][s] - by_arm["conventional"][s] for s in ("1", "2")]
half = 12.706204736432 * statistics.stdev(d) / math.sqrt(2)
m = statistics.mean(d)
assert f"{m:+.4f} [{m - half:+.4f}, {m + half:+.4f}]" in report, report
PY
for f in results.csv report.md experiment.yaml; do [ -s "$tmp/two/$f" ] || fail "run root lacks $f"; done
# scripts/compare_arms.py (any two arms) gives the report's paired difference and interval.
compared=$(python3 "$SOURCE_DIR/scripts/compare_arms.py" "$tmp/two" hourglass:conventional --curve) || fail "compare_arms.py"
interval=$(grep -o "^[-+][0-9.]* \[[-+][0-9.]*, [-+][0-9.]*\]" <<<"${compared#hourglass - conventional: }")
[ -n "$interval" ] && grep -qF "| $interval |" "$tmp/two/report.md" || fail "compare_arms.py differs from report.md: $compared"
contains "by step: " "$compared" "compare_arms.py --curve"
# The seeds for 80% power: compare_arms.py and report.md agree (formula tested in test_experiment.cpp).
power=$(grep -o "seeds for 80% power at this gap: [0-9]*" <<<"$compared" | grep -o "[0-9]*$")
grep -q "from the measured paired sd): hourglass $power\." "$tmp/two/report.md" || fail "power: compare_arms.py says '$power', report.md differs"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  for f in val_curves.png final_loss.png paired_diff.png; do [ -s "$tmp/two/$f" ] || fail "run root lacks $f"; done
  grep -q "paired_diff.png" "$tmp/two/report.md" || fail "report.md shows the paired differences"
fi

# The geometry pipeline: train the reference, profile it, schedule from the profile, train the arm.
cat >"$tmp/geo.yaml" <<YAML
base: base.yaml
seeds: [1]
budget: {reference: uniform}
profile: {arm: uniform, tokens: 64, topo_norm: l2, ph_memory: 1}
arms:
  - name: uniform
  - name: topo
    schedule: topo:hyperbolic
  - name: anti
    schedule: anti
YAML
expect 0 "geometry experiment" -- "$FFNSHAPE" experiment "$tmp/geo.yaml" --run-root "$tmp/geo"
python3 - "$tmp/geo" <<'PY' || fail "profile and scheduled widths"
import json, sys, re
root = sys.argv[1]
p = json.load(open(root + "/profile.json"))
assert p["n_layers"] == 3 and "hyperbolic" in p["layers"][0]["work"]["topo"], p
assert p["settings"]["topo_internal_norm"] == "L2", p["settings"]  # the experiment's profile settings reach it
def widths(arm):
    text = open(f"{root}/{arm}/seed-1/config.yaml").read()
    return [int(w) for w in re.search(r"widths: \[([^\]]*)\]", text).group(1).split(",")]
topo, anti = widths("topo"), widths("anti")
assert sum(topo) == sum(anti) == 3 * 64, (topo, anti)
assert anti == topo[::-1], (topo, anti)
PY
contains "topo:" "$(cat "$tmp/geo/report.md")" "the report lists the scheduled widths"

# SIGTERM between two runs (the reference just finished; the process is profiling it or starting the
# next run): the request stays pending, the next run stops after its first step with a checkpoint,
# exit 1; the rerun finishes, and the resumed run ends as the uninterrupted experiment's did.
stopped_when "$tmp/geo_stop/uniform/seed-1/summary.json" "$tmp/geo_stop.log" "experiment stopped between runs" -- \
  "$FFNSHAPE" experiment "$tmp/geo.yaml" --run-root "$tmp/geo_stop"
contains "stopped during topo seed 1" "$(cat "$tmp/geo_stop.log")" "the stop acts on the next run"
ls "$tmp"/geo_stop/topo/seed-1/checkpoints/step_*/DONE >/dev/null 2>&1 || fail "the stopped run left no checkpoint"
expect 0 "rerun after a stop between runs" -- "$FFNSHAPE" experiment "$tmp/geo.yaml" --run-root "$tmp/geo_stop"
python3 - "$tmp/geo" "$tmp/geo_stop" <<'PY' || fail "the run stopped between runs does not end as the uninterrupted one"
import json, sys
for arm in ("uniform", "topo", "anti"):
    a, b = (json.load(open(f"{root}/{arm}/seed-1/summary.json")) for root in sys.argv[1:3])
    assert b["complete"] and a["val_loss"] == b["val_loss"], (arm, a["val_loss"], b["val_loss"])
PY

# SIGTERM before the process's first run: a rerun whose reference is done but not yet profiled
# profiles first; a signal then is kept (not fatal, exit 143 as it was) and stops the next run.
mkdir -p "$tmp/geo_first" && cp -r "$tmp/geo_stop/uniform" "$tmp/geo_first/uniform"
stopped_when "log:finished earlier, skipped" "$tmp/geo_first.log" "experiment stopped before its first run" -- \
  "$FFNSHAPE" experiment "$tmp/geo.yaml" --run-root "$tmp/geo_first"
contains "stopped during topo seed 1" "$(cat "$tmp/geo_first.log")" "a stop before the first run acts on that run"

# A profile seed outside the evaluated seeds: the reference trains once more for the profile alone,
# and that run stays out of the results (no evaluated seed saw its own profile).
sed -e 's/tokens: 64,/tokens: 64, seed: 9,/' "$tmp/geo.yaml" >"$tmp/geo9.yaml"
expect 0 "geometry experiment, profile seed 9" -- "$FFNSHAPE" experiment "$tmp/geo9.yaml" --run-root "$tmp/geo9"
python3 - "$tmp/geo9" <<'PY' || fail "a profile seed outside the seeds"
import csv, json, sys
root = sys.argv[1]
p = json.load(open(root + "/profile.json"))
assert "/uniform/seed-9/" in p["provenance"]["checkpoint"], p["provenance"]
rows = list(csv.DictReader(open(root + "/results.csv")))
assert sorted((r["arm"], r["seed"]) for r in rows) == [("anti", "1"), ("topo", "1"), ("uniform", "1")], rows
report = open(root + "/report.md").read()
assert "work profile of uniform seed 9, a run outside the evaluated seeds" in report, report
PY

# Pooled profiles: reference seeds 9 and 1, two token samples each. The geo9 run of seed 9 and the
# geo run of seed 1 are copied in, so only the profiles are new. profile.json is the pool (each
# layer's mean share, recomputed here from the four single files), the trained topo widths are its
# schedule, and report.md gives each schedule's range over the single profiles.
mkdir -p "$tmp/pool" && cp -r "$tmp/geo9/uniform" "$tmp/pool/uniform" && cp -r "$tmp/geo/uniform/seed-1" "$tmp/pool/uniform/"
sed -e 's/tokens: 64,/tokens: 64, seeds: [9, 1], samples: 2, stable_multiples: 0,/' "$tmp/geo.yaml" >"$tmp/pool.yaml"
expect 0 "geometry experiment, pooled profiles" -- "$FFNSHAPE" experiment "$tmp/pool.yaml" --run-root "$tmp/pool"
contains "pooled 4 profiles" "$out" "the pool is announced"
python3 - "$tmp/pool" <<'PY' || fail "pooled profiles"
import json, math, re, sys
root = sys.argv[1]
singles = [json.load(open(f"{root}/profiles/seed-{s}-sample-{k}.json")) for s in (9, 1) for k in (0, 1)]
# Each seed's two samples draw other tokens; the sample-0 file of seed 1 is the geo run's own profile.
assert singles[0]["layers"][0]["work"] != singles[1]["layers"][0]["work"]
pooled = json.load(open(root + "/profile.json"))
assert pooled["pooled"]["profiles"][0].endswith("profiles/seed-9-sample-0.json"), pooled["pooled"]
for stat, geometry in (("topo", "hyperbolic"), ("gw", "spherical"), ("shift", "raw")):
    shares = []
    for p in singles:
        values = [layer["work"][stat][geometry] for layer in p["layers"]]
        shares.append([v / sum(values) for v in values])
    for l in range(3):
        column = [s[l] for s in shares]
        mean = sum(column) / 4
        sd = math.sqrt(sum((v - mean) ** 2 for v in column) / 3)
        assert abs(pooled["layers"][l]["work"][stat][geometry] - mean) < 1e-9, (stat, l)
        spread = pooled["layers"][l]["work_spread"][stat][geometry]
        assert abs(spread["sd"] - sd) < 1e-9 and spread["min"] == min(column) and spread["max"] == max(column)
dims = [sum(p["layers"][1]["intrinsic_dimension"]["in"] for p in singles) / 4]
assert abs(pooled["layers"][1]["intrinsic_dimension"]["in"] - dims[0]) < 1e-9
topo = pooled["schedules"]["topo"]
assert len(topo["single"]) == 4 and all(sum(w) == sum(topo["pooled"]) for w in topo["single"]), topo
text = open(f"{root}/topo/seed-1/config.yaml").read()
trained = [int(x) for x in re.search(r"widths: \[([^\]]*)\]", text).group(1).split(",")]
assert trained == topo["pooled"], (trained, topo)
for l in range(3):
    assert topo["low"][l] == min(w[l] for w in topo["single"]) and topo["high"][l] == max(w[l] for w in topo["single"])
report = open(root + "/report.md").read()
assert "work profile of uniform seeds 9, 1 (2 token samples each), pooled" in report, report
assert "; outside the evaluated seeds: 9." in report, report
assert "| topo | " + " ".join(map(str, topo["pooled"])) + " |" in report, report
# The statistic's share per layer with its interval: only topo:hyperbolic (topo and anti follow it).
row = next(line for line in report.splitlines() if line.startswith("| topo:hyperbolic |"))
mean0 = pooled["layers"][0]["work_spread"]["topo"]["hyperbolic"]["mean"]
assert row.split("|")[2].strip().startswith(f"{mean0:.3f} ± "), row
assert "| gw:spherical |" not in report, report
changes = max((h - lo) // topo["multiple_of"] for h, lo in zip(topo["high"], topo["low"]))
assert (changes > 0) == ("**Warning:** the widths of topo move" in report), report
PY

# scripts/rule_spread.py solves every rule from the pool and the single profiles: its topo:hyperbolic
# row is profile.json's (what the experiment computed for its topo arm).
spread=$(python3 "$SOURCE_DIR/scripts/rule_spread.py" "$tmp/pool" --config "$tmp/base.yaml" --ffnshape "$FFNSHAPE") ||
  fail "rule_spread.py"
python3 - "$tmp/pool" "$spread" <<'PY' || fail "rule_spread.py's topo:hyperbolic row differs from profile.json"
import json, sys
topo = json.load(open(sys.argv[1] + "/profile.json"))["schedules"]["topo"]
row = next(l for l in sys.argv[2].splitlines() if l.startswith("| topo:hyperbolic |"))
cells = [c.strip() for c in row.split("|")[1:-1]]
assert cells[1] == " ".join(map(str, topo["pooled"])), (cells, topo)
assert cells[2] == " ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in zip(topo["low"], topo["high"])), (cells, topo)
assert len(sys.argv[2].splitlines()) == 2 + 9, sys.argv[2]
PY

# --parallel 2: the pooled experiment from scratch, two runs at a time, each in a process of its own.
# The two reference runs train side by side and profile themselves, the parent pools, then topo and
# anti train side by side. Every number is the one-after-the-other experiment's ($tmp/pool) bit for bit.
expect 0 "pooled experiment, --parallel 2" -- "$FFNSHAPE" experiment "$tmp/pool.yaml" --run-root "$tmp/pool_par" --parallel 2
contains "log $tmp/pool_par/uniform/seed-9/train.log" "$out$err" "each run's process logs to its run directory"
contains "2 runs side by side, 1 thread per run" "$(cat "$tmp/pool_par/report.md")" "the report gives the parallelism"
contains "wall time of the study: " "$(cat "$tmp/pool_par/report.md")" "the report gives the study's wall time"
python3 - "$tmp/pool" "$tmp/pool_par" "$tmp/out" <<'PY' || fail "--parallel 2 differs from the runs one after the other"
import json, sys
seq, par, log = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().splitlines()
def losses(root, arm, seed):
    lines = [json.loads(l) for l in open(f"{root}/{arm}/seed-{seed}/metrics.jsonl")]
    return [(l["step"], l.get("loss"), l.get("grad_norm"), l.get("val_loss")) for l in lines]
for arm, seed in (("uniform", 9), ("uniform", 1), ("topo", 1), ("anti", 1)):
    a, b = losses(seq, arm, seed), losses(par, arm, seed)
    assert a == b and len(a) > 4, (arm, seed, a[-1:], b[-1:])
for name in ["profile.json"] + [f"profiles/seed-{s}-sample-{k}.json" for s in (9, 1) for k in (0, 1)]:
    a, b = json.load(open(f"{seq}/{name}")), json.load(open(f"{par}/{name}"))
    assert a["layers"] == b["layers"], name
# Side by side: the second reference run started before the first one ended, and topo waited for the pool.
where = lambda text: next(i for i, line in enumerate(log) if text in line)
assert where("uniform seed 1 -> ") < where("uniform seed 9: done"), log
assert where("pooled 4 profiles") < where("topo seed 1 -> "), log
PY

# A stop request to a parallel experiment reaches every run: both checkpoint, exit 1, no process is
# left; the rerun finishes, and the runs end as the uninterrupted ones did.
stopped_when "$tmp/two_par/conventional/seed-2/checkpoints/step_*/DONE" "$tmp/two_par.log" "stopped parallel experiment" -- \
  "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two_par" --parallel 2
sleep 0.5
pgrep -f "two_par --job" >/dev/null && fail "a run's process outlived the stopped experiment"
ls "$tmp"/two_par/conventional/seed-1/checkpoints/step_*/DONE >/dev/null 2>&1 || fail "the first run left no checkpoint"
contains "stop requested" "$(cat "$tmp/two_par.log")" "the parent passes the stop on"
expect 0 "rerun of the stopped parallel experiment" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two_par" --parallel 2
python3 - "$tmp/two" "$tmp/two_par" <<'PY' || fail "the stopped parallel runs do not end as the uninterrupted ones"
import json, sys
for arm in ("conventional", "hourglass"):
    for seed in (1, 2):
        a, b = (json.load(open(f"{root}/{arm}/seed-{seed}/summary.json")) for root in sys.argv[1:3])
        assert b["complete"] and a["val_loss"] == b["val_loss"], (arm, seed, a["val_loss"], b["val_loss"])
PY
expect 2 "--job that names no run" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two_par" --job conventional:7
contains "not a run of this experiment" "$err" "--job message"
sed 's/^seeds:/parallel: 0\nseeds:/' "$tmp/two.yaml" >"$tmp/parallel0.yaml"
expect 2 "parallel: 0 in the file" -- "$FFNSHAPE" experiment "$tmp/parallel0.yaml" --dry-run
contains "parallel: must be at least 1" "$err" "parallel: 0 message"

# A uniform schedule written out as explicit widths is the plain model: the same run bit for bit.
expect 0 "plain run" -- "$FFNSHAPE" train "$tmp/base.yaml" --run-dir "$tmp/plain" --set train.steps=20
expect 0 "explicit uniform widths" -- "$FFNSHAPE" train "$tmp/base.yaml" --run-dir "$tmp/explicit" --set train.steps=20 \
  --set 'model.ffn.widths=[64,64,64]'
grep -q "widths: \[64, 64, 64\]" "$tmp/explicit/config.yaml" || fail "explicit widths recorded"
cmp -s "$tmp/plain/checkpoints/step_00000020/model.pt" "$tmp/explicit/checkpoints/step_00000020/model.pt" ||
  fail "explicit uniform widths give other weights than the plain run"
python3 - "$tmp/plain/metrics.jsonl" "$tmp/explicit/metrics.jsonl" <<'PY' || fail "explicit uniform widths give other losses"
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:3])
strip = lambda rows: [{k: v for k, v in r.items() if k not in ("tokens_per_s", "elapsed_s", "time", "mfu", "eta_s", "peak_memory_bytes")} for r in rows]
assert strip(a) == strip(b), (a[-1], b[-1])
PY

# profile and schedule on their own, on the reference run of that experiment.
expect 0 "profile with diagnostics" -- "$FFNSHAPE" profile "$tmp/geo/uniform/seed-1" --out "$tmp/p.json" --tokens 48 \
  --perturb ablate,scale:0.5 --additivity --eval-batches 1
python3 - "$tmp/p.json" <<'PY' || fail "profile JSON: 9 finite statistics per layer, diagnostics, provenance"
import json, math, sys
p = json.load(open(sys.argv[1]))
assert p["format"] == "ffnshape-profile" and p["n_layers"] == 3 and p["provenance"]["checkpoint"], p.keys()
for layer in p["layers"]:
    values = [layer["work"][s][g] for s in ("shift", "gw", "topo") for g in ("raw", "spherical", "hyperbolic")]
    assert all(math.isfinite(v) and v >= 0 for v in values), layer
    assert set(layer["sensitivity"]) == {"ablate", "scale:0.5"}, layer
assert len(p["additivity"]) == 2 * 2 and len(p["spearman"]) == 9 * 2, p
assert p["settings"]["topo_internal_norm"] == "L-infinity" and "L-infinity" in p["settings"]["topo"], p["settings"]
PY
# The L2 ground norm: each matching costs between 1 and sqrt 2 times its L-infinity cost, so does the distance.
expect 0 "profile with the L2 diagram norm" -- "$FFNSHAPE" profile "$tmp/geo/uniform/seed-1" --out "$tmp/p2.json" \
  --tokens 48 --stats topo --topo-norm l2
python3 - "$tmp/p.json" "$tmp/p2.json" <<'PY' || fail "L2 topology between 1 and sqrt 2 times L-infinity"
import json, sys
linf, l2 = (json.load(open(f)) for f in sys.argv[1:])
assert l2["settings"]["topo_internal_norm"] == "L2", l2["settings"]
for a, b in zip(linf["layers"], l2["layers"]):
    for g, v in a["work"]["topo"].items():
        w = b["work"]["topo"][g]
        assert v * (1 - 1e-9) <= w <= v * 2**0.5 * (1 + 1e-9), (g, v, w)
PY
expect 0 "schedule from the profile" -- "$FFNSHAPE" schedule --config "$tmp/base.yaml" --rule gw:spherical \
  --profile "$tmp/p.json" --out "$tmp/w.json"
contains "(+0.000000%)" "$out" "the schedule keeps the budget"
expect 0 "params shows scheduled widths" -- "$FFNSHAPE" params "$tmp/base.yaml" --set model.ffn.schedule.file="$tmp/w.json"
contains "ffn widths per layer" "$out" "params lists the widths"
expect 2 "unknown rule" -- "$FFNSHAPE" schedule --config "$tmp/base.yaml" --rule zigzag
contains "unknown rule 'zigzag'" "$err" "unknown rule message"
expect 2 "profile of another depth" -- "$FFNSHAPE" schedule --config "$tmp/base.yaml" --set model.n_layers=4 \
  --rule topo:hyperbolic --profile "$tmp/p.json"
contains "3 layers, but this model has 4" "$err" "depth mismatch message"
expect 2 "too few tokens" -- "$FFNSHAPE" profile "$tmp/geo/uniform/seed-1" --out "$tmp/q.json" --tokens 2
contains "--tokens" "$err" "too few tokens message"
expect 1 "persistence past its budget" -- "$FFNSHAPE" profile "$tmp/geo/uniform/seed-1" --out "$tmp/q.json" --tokens 48 \
  --stats topo --geometries spherical --ph-memory 0.000001 --threads 1
contains "layer 0, spherical geometry, X (entering the FFN): Rips persistence (H1) of 48 points" "$err" "budget message names the layer"
contains "fix: fewer tokens (--tokens, now 48), a Rips threshold (--ph-threshold" "$err" "budget message says what to change"
contains "the profile section's tokens, ph_threshold, ph_memory and ph_seconds" "$err" "and names the experiment keys"
[ ! -e "$tmp/q.json" ] || fail "a profile stopped by the budget writes no file"

# Malformed experiment files: exit 2 with the key and a hint.
bad() {  # bad NAME EXPECTED_TEXT YAML
  printf '%s\n' "$3" >"$tmp/$1.yaml"
  expect 2 "$1" -- "$FFNSHAPE" experiment "$tmp/$1.yaml" --run-root "$tmp/bad" --dry-run
  contains "$2" "$err" "$1 message"
}
bad unknown_key "colour" "$(printf 'base: base.yaml\nbudget: {params: 1000}\ncolour: red\narms: [{name: a}]')"
bad missing_base "base" "$(printf 'base: nowhere.yaml\nbudget: {params: 1000}\narms: [{name: a}]')"
bad no_budget "budget.reference" "$(printf 'base: base.yaml\narms: [{name: a}]')"
bad unknown_reference "budget.reference" "$(printf 'base: base.yaml\nbudget: {reference: b}\narms: [{name: a}]')"
bad duplicate_arm "names two arms" "$(printf 'base: base.yaml\nbudget: {params: 1000}\narms: [{name: a}, {name: a}]')"
bad no_profile "profile" "$(printf 'base: base.yaml\nbudget: {reference: a}\narms: [{name: a}, {name: b, schedule: gw:spherical}]')"
bad bad_rule "arms[1].schedule" "$(printf 'base: base.yaml\nbudget: {reference: a}\narms: [{name: a}, {name: b, schedule: zigzag}]')"
bad bad_arm_key "arms[0].sovle" "$(printf 'base: base.yaml\nbudget: {params: 1000}\narms: [{name: a, sovle: [d_model]}]')"
bad not_yaml "" "$(printf 'base: [unclosed\n')"
bad unreachable "cannot meet the budget" "$(printf 'base: base.yaml\nbudget: {params: 1000}\narms: [{name: a}]')"
expect 2 "unknown --only arm" -- "$FFNSHAPE" experiment "$tmp/two.yaml" --run-root "$tmp/two" --only nobody
contains "--only" "$err" "--only message"

# Sweeps: expansion and solving, points off the budget listed and skipped, emitted commands and Slurm
# script, a local run with its aggregation.
cat >"$tmp/grid.yaml" <<YAML
name: grid
base: base.yaml
set: [model.ffn.kind=hourglass, train.steps=20]
seeds: [1, 2]
budget: {reference: base, tolerance: 0.01}
grid:
  model.ffn.k: [1, 2]
  model.n_layers: [2, 3, 40]
solve: [d_model=8..96, ffn.hidden=2..128]
slurm: ["--gres=gpu:1", "--time=01:00:00"]
YAML
expect 0 "sweep dry run" -- "$FFNSHAPE" sweep "$tmp/grid.yaml" --run-root "$tmp/grid" --dry-run
python3 - "$out" <<'PY' || fail "sweep dry run: 6 points, the 40-layer K=1 point skipped with its reason"
import re, sys
text = sys.argv[1]
kept = re.findall(r"^  (k\d_n_layers\d+) +\d+ total", text, re.M)
skipped = re.findall(r"^  (k\d_n_layers\d+) \(.*%\): (.+)$", text, re.M)
assert sorted(kept + [name for name, _ in skipped]) == sorted(
    f"k{k}_n_layers{l}" for k in (1, 2) for l in (2, 3, 40)), (kept, skipped)
assert ("k1_n_layers40", ) == tuple(n for n, _ in skipped), skipped
assert "within" in skipped[0][1] or "step" in skipped[0][1], skipped
PY
expect 0 "sweep --emit slurm" -- "$FFNSHAPE" sweep "$tmp/grid.yaml" --run-root "$tmp/grid" --emit slurm
bash -n "$tmp/grid/sweep.sbatch" || fail "the Slurm script is not valid bash"
python3 - "$tmp/grid/sweep.sbatch" <<'PY' || fail "the Slurm script names one config per task"
import re, sys, os
text = open(sys.argv[1]).read()
configs = re.search(r"CONFIGS=\(\n(.*?)\n\)", text, re.S).group(1).split("\n")
configs = [c.strip().strip("'") for c in configs]
assert len(configs) == 10 and len(set(configs)) == 10, configs  # 5 points x 2 seeds
assert "#SBATCH --array=0-9" in text and "#SBATCH --gres=gpu:1" in text, text
assert all(os.path.exists(c) for c in configs), configs
assert "seed: 2" in open(configs[1]).read(), configs[1]
# One process per task by default: no resources of its own, no srun.
assert "--nodes" not in text and "srun" not in text, text
assert text.endswith('exec "$FFNSHAPE" train "${CONFIGS[$task]}" --run-dir "${RUN_DIRS[$task]}" --resume auto\n'), text
PY
expect 0 "sweep --emit list" -- "$FFNSHAPE" sweep "$tmp/grid.yaml" --run-root "$tmp/grid" --emit list
[ "$(grep -c ' train ' "$tmp/grid/commands.txt")" -eq 10 ] || fail "the command list has one line per run"
grep -q '^torchrun\|srun' "$tmp/grid/commands.txt" && fail "a single-GPU run's command starts a launcher"
# Run one command of the list by hand (as a cluster would), then aggregate.
bash -c "$(sed -n 1p "$tmp/grid/commands.txt")" >/dev/null 2>&1 || fail "a listed command runs"
expect 0 "sweep --report" -- "$FFNSHAPE" sweep "$tmp/grid.yaml" --run-root "$tmp/grid" --report
contains "1/2" "$out" "the report counts the finished run"
[ -s "$tmp/grid/results.csv" ] || fail "sweep results.csv"
printf 'base: base.yaml\nbudget: {reference: base}\ngrid: {model.d_model: [16]}\nsolve: [d_model]\n' >"$tmp/grid_bad.yaml"
expect 2 "grid key also solved" -- "$FFNSHAPE" sweep "$tmp/grid_bad.yaml" --dry-run
contains "is also in solve" "$err" "grid/solve clash message"
printf 'base: base.yaml\nbudget: {reference: base}\ngrid: [1, 2]\n' >"$tmp/grid_bad2.yaml"
expect 2 "grid not a mapping" -- "$FFNSHAPE" sweep "$tmp/grid_bad2.yaml" --dry-run
contains "grid" "$err" "grid message"
printf 'base: base.yaml\nbudget: {reference: base}\ngrid: {model.colour: [1]}\n' >"$tmp/grid_bad3.yaml"
expect 2 "unknown grid key" -- "$FFNSHAPE" sweep "$tmp/grid_bad3.yaml" --dry-run
contains "colour" "$err" "unknown grid key message"

# Runs over several GPUs or nodes: the grid above with nodes / gpus_per_node.
grid_with() {  # NAME LINES...: the grid under another name, with more top-level lines
  local name=$1
  shift
  sed -e "s/^name: grid$/name: $name/" -e '/^slurm:/d' "$tmp/grid.yaml" >"$tmp/$name.yaml"
  printf '%s\n' "slurm: [\"--time=01:00:00\"]" "$@" >>"$tmp/$name.yaml"
}
grid_with grid_dp "nodes: 2" "gpus_per_node: 4"
expect 0 "sweep --emit slurm, 2 nodes x 4 GPUs" -- "$FFNSHAPE" sweep "$tmp/grid_dp.yaml" --run-root "$tmp/grid_dp" --emit slurm
bash -n "$tmp/grid_dp/sweep.sbatch" || fail "the data-parallel Slurm script is not valid bash"
python3 - "$tmp/grid_dp/sweep.sbatch" <<'PY' || fail "the data-parallel Slurm script asks for 2 nodes x 4 GPUs and runs srun"
import sys
text = open(sys.argv[1]).read()
directives = [l for l in text.splitlines() if l.startswith("#SBATCH")]
for line in ("#SBATCH --array=0-9", "#SBATCH --nodes=2", "#SBATCH --ntasks-per-node=4", "#SBATCH --gpus-per-node=4",
             "#SBATCH --time=01:00:00"):
    assert line in directives, (line, directives)
assert text.endswith('exec srun --kill-on-bad-exit=1 "$FFNSHAPE" train "${CONFIGS[$task]}" --run-dir "${RUN_DIRS[$task]}"'
                     ' --resume auto\n'), text
PY
# Array task 3 under bash with a fake srun: every task of the step trains run 3's config.
mkdir -p "$tmp/bin"
ln -sf "$SOURCE_DIR/tests/fake_srun.sh" "$tmp/bin/srun"
printf '#!/usr/bin/env bash\nprintf "%%s " "$SLURM_PROCID/$SLURM_STEP_NUM_TASKS" "$@" >"%s/rank.$SLURM_PROCID"\n' "$tmp" >"$tmp/stub"
chmod +x "$tmp/stub"
expect 0 "the data-parallel array task under a fake srun" -- env PATH="$tmp/bin:$PATH" FFNSHAPE="$tmp/stub" \
  SLURM_ARRAY_TASK_ID=3 SLURM_NTASKS=2 bash "$tmp/grid_dp/sweep.sbatch"
config3=$(sed -n '/^CONFIGS=(/,/^)/p' "$tmp/grid_dp/sweep.sbatch" | sed -n 5p | sed "s/^ *'//; s/'$//")
run3=$(sed -n '/^RUN_DIRS=(/,/^)/p' "$tmp/grid_dp/sweep.sbatch" | sed -n 5p | sed "s/^ *'//; s/'$//")
for r in 0 1; do
  [ "$(cat "$tmp/rank.$r" 2>/dev/null)" = "$r/2 train $config3 --run-dir $run3 --resume auto " ] ||
    fail "array task 3, rank $r ran: $(cat "$tmp/rank.$r" 2>/dev/null)"
done
grid_with grid_cpu "nodes: 2" "gpus_per_node: 0"
expect 0 "sweep --emit slurm, 2 CPU nodes" -- "$FFNSHAPE" sweep "$tmp/grid_cpu.yaml" --run-root "$tmp/grid_cpu" --emit slurm
contains $'#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --time' "$(cat "$tmp/grid_cpu/sweep.sbatch")" \
  "CPU tasks: one rank per node, no GPUs"
grid_with grid_gpus "gpus_per_node: 4"
expect 0 "sweep --emit list, 4 GPUs" -- "$FFNSHAPE" sweep "$tmp/grid_gpus.yaml" --run-root "$tmp/grid_gpus" --emit list
[ "$(grep -c "^torchrun --standalone --nproc_per_node=4 --no-python '$FFNSHAPE' train '[^']*' --run-dir '[^']*' --resume auto$" \
  "$tmp/grid_gpus/commands.txt")" -eq 10 ] || fail "one torchrun line per run: $(head -1 "$tmp/grid_gpus/commands.txt")"
grid_with grid_nodes "nodes: 2"
expect 2 "sweep --emit list across nodes" -- "$FFNSHAPE" sweep "$tmp/grid_nodes.yaml" --run-root "$tmp/grid_nodes" --emit list
contains "nodes: is 2, but --emit list launches single-node tasks" "$err" "list across nodes message"
contains "fix: use --emit slurm" "$err" "list across nodes fix"
[ ! -e "$tmp/grid_nodes/configs" ] || fail "a refused list wrote configs"
bad_resources() {  # LINE MESSAGE
  grid_with grid_bad_resources "$1"
  expect 2 "sweep with $1" -- "$FFNSHAPE" sweep "$tmp/grid_bad_resources.yaml" --dry-run
  contains "$2" "$err" "$1 message"
  contains "fix:" "$err" "$1 fix"
}
bad_resources "nodes: 0" "nodes: must be at least 1, but is 0"
bad_resources "nodes: 1.5" "nodes: must be an integer"
bad_resources "gpus_per_node: -1" "gpus_per_node: must be at least 0, but is -1"
bad_resources "gpus_per_node: eight" "gpus_per_node: must be an integer"

# The shipped experiment and sweep files all plan within their tolerance.
for f in "$SOURCE_DIR"/configs/demo/experiment.yaml "$SOURCE_DIR"/configs/paper/experiments/*.yaml; do
  command=experiment
  grep -q '^grid:' "$f" && command=sweep
  expect 0 "$(basename "$f") plans" -- "$FFNSHAPE" "$command" "$f" --run-root "$tmp/plan" --dry-run
done

finish cli_experiment
