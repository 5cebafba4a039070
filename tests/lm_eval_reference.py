#!/usr/bin/env python3
"""lm-evaluation-harness's own view of a task file, for tests/cli_eval_test.sh.

    lm_eval_reference.py prompts TASK FILE.jsonl

TASK is one of the harness's task names (arc_easy, hellaswag, piqa). The harness's task definition
(its YAML and utils, as installed) is loaded with the dataset replaced by FILE, and every document's
context, choices and gold index are printed as JSON lines, as the harness builds them.
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


def main():
    mode, name, path = sys.argv[1:4]
    assert mode == "prompts", mode
    task = task_on_file(name, os.path.abspath(path))
    for doc in task.validation_docs():
        print(json.dumps({"context": task.doc_to_text(doc), "choices": task.doc_to_choice(doc),
                          "gold": int(task.doc_to_target(doc))}))


if __name__ == "__main__":
    main()
