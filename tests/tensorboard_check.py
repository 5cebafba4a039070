#!/usr/bin/env python3
"""Checks a run's TensorBoard events (RUN/tb/) against its metrics.jsonl with tensorboard's own readers.

    tensorboard_check.py RUN [--text TAG ...]

- RUN/tb/ holds exactly one event file (rank 0's; other ranks write none);
- EventAccumulator finds every value of metrics.jsonl under its tag at its step, equal to the value
  rounded to float32 (TensorBoard's simple_value), and nothing else; the per-layer statistics of an
  entry's "layers" ({name: [per layer]}) are under "name/layer_NN";
- the raw events (EventFileLoader, no de-duplication) hold each (tag, step) once: a resumed run
  did not repeat steps;
- each --text TAG is a text summary at step 0. Prints one line of counts; exits 1 with the reason.
"""
import argparse
import collections
import glob
import json
import os
import sys

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

# metrics.jsonl key -> TensorBoard tag (ProgressLog writes both).
TAGS = {"loss": "train/loss", "lr": "train/lr", "grad_norm": "train/grad_norm", "tokens_per_s": "train/tokens_per_s",
        "mfu": "train/mfu", "peak_memory_bytes": "train/peak_memory_bytes", "val_loss": "val/loss",
        "val_ppl": "val/ppl"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--text", nargs="*", default=[])
    args = parser.parse_args()
    files = glob.glob(os.path.join(args.run, "tb", "events.out.tfevents.*"))
    assert len(files) == 1, f"expected one event file in {args.run}/tb, found {files}"

    expected = collections.defaultdict(dict)  # tag -> step -> value
    for line in open(os.path.join(args.run, "metrics.jsonl")):
        entry = json.loads(line)
        for key, tag in TAGS.items():
            if key in entry:
                expected[tag][entry["step"]] = float(np.float32(entry[key]))
        for name, per_layer in entry.get("layers", {}).items():
            for layer, value in enumerate(per_layer):
                expected[f"{name}/layer_{layer:02d}"][entry["step"]] = float(np.float32(value))

    acc = EventAccumulator(os.path.join(args.run, "tb"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    found = {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}
    assert set(found) == set(expected), f"tags {sorted(found)} != metrics.jsonl's {sorted(expected)}"
    for tag, values in expected.items():
        assert found[tag] == values, f"{tag}: TensorBoard {found[tag]} != metrics.jsonl {values}"

    seen = collections.Counter()
    for event in EventFileLoader(files[0]).Load():
        for value in event.summary.value:
            seen[(value.tag, event.step)] += 1
    repeated = [key for key, count in seen.items() if count > 1]
    assert not repeated, f"(tag, step) written more than once: {sorted(repeated)[:5]}"

    for tag in args.text:
        texts = acc.Tensors(tag) if tag in acc.Tags()["tensors"] else []
        assert len(texts) == 1 and texts[0].step == 0 and texts[0].tensor_proto.string_val, f"text '{tag}': {texts}"
    print(f"{args.run}: {sum(map(len, expected.values()))} scalars under {len(expected)} tags equal metrics.jsonl; "
          f"{len(seen)} (tag, step) pairs, none repeated; texts {args.text}")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as problem:
        print(f"tensorboard_check: {problem}", file=sys.stderr)
        sys.exit(1)
