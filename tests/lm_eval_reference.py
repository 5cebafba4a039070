#!/usr/bin/env python3
"""lm-evaluation-harness's own view of a task file, for tests/cli_eval_test.sh.

    lm_eval_reference.py prompts TASK FILE.jsonl
    lm_eval_reference.py score TASK FILE.jsonl HF_DIR

TASK is one of the harness's task names (arc_easy, hellaswag, piqa). The harness's task definition
(its YAML and utils, as installed) is loaded with the dataset replaced by FILE. `prompts` prints every
document's context, choices and gold index as JSON lines, as the harness builds them. `score` runs the
harness's evaluator with its Hugging Face model class on HF_DIR (fp32, CPU) and prints one JSON
object: acc, acc_stderr, acc_norm, acc_norm_stderr and every document's per-choice log-likelihoods.
"""
import json
import os
import sys

import lm_eval
from lm_eval.api.task import ConfigurableTask
from lm_eval.tasks._yaml_loader import load_yaml

TASK_FILES = {"arc_easy": "arc/arc_easy.yaml", "hellaswag": "hellaswag/hellaswag.yaml", "piqa": "piqa/piqa.yaml"}


def task_on_file(name, path):
    config = load_yaml(os.path.join(os.path.dirname(lm_eval.__file__), "tasks", TASK_FILES[name]))
    config.pop("tag", None)
    config.update(dataset_path="json", dataset_name=None, dataset_kwargs={"data_files": {"validation": path}},
                  training_split=None, validation_split="validation", test_split=None)
    return ConfigurableTask(config=config)


def score(task, name, model_dir):
    from lm_eval import simple_evaluate
    out = simple_evaluate(model="hf", model_args=f"pretrained={model_dir},dtype=float32,device=cpu",
                          tasks=[task], log_samples=True, batch_size=1)
    metrics = out["results"][name]
    samples = sorted(out["samples"][name], key=lambda s: s["doc_id"])
    print(json.dumps({
        **{key: metrics[f"{key},none"] for key in ("acc", "acc_stderr", "acc_norm", "acc_norm_stderr")},
        "loglikelihoods": [[float(r[0][0]) for r in s["resps"]] for s in samples],
    }))


def main():
    mode, name, path = sys.argv[1:4]
    task = task_on_file(name, os.path.abspath(path))
    if mode == "score":
        score(task, name, sys.argv[4])
        return
    assert mode == "prompts", mode
    for doc in task.validation_docs():
        print(json.dumps({"context": task.doc_to_text(doc), "choices": task.doc_to_choice(doc),
                          "gold": int(task.doc_to_target(doc))}))


if __name__ == "__main__":
    main()
