"""transformers as the reference for the import / export tests (tests/cli_hf_test.sh).

    hf_reference.py check                               exit 77 when torch / transformers / safetensors are missing
    hf_reference.py make DIR NAME                       save_pretrained of a small random model (NAME below)
    hf_reference.py old_style DIR                       rewrite DIR/config.json with top-level rope_theta + rope_scaling
    hf_reference.py edit DIR KEY JSON_VALUE             set one config.json key
    hf_reference.py drop DIR TENSOR | reshape DIR TENSOR    remove a tensor, or give it a wrong shape
    hf_reference.py logits DIR IDS                      {"logits": ...} of AutoModelForCausalLM in fp32
    hf_reference.py compare A.json B.json TOL           max |a - b| of two logits files; exit 1 above TOL
    hf_reference.py same_tensors A.safetensors B.safetensors   exit 1 unless names, dtypes and values are equal
"""
import json
import os
import sys


def check():
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        print("SKIP: the Python references are missing (%s); run scripts/setup.sh" % e)
        sys.exit(77)


LLAMA3 = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 16}

MODELS = {
    # name: (family, extra config)
    "llama_gqa": ("llama", dict(num_key_value_heads=2, tie_word_embeddings=False)),
    "llama_tied_llama3": ("llama", dict(num_key_value_heads=4, tie_word_embeddings=True, rope_parameters=LLAMA3)),
    "llama_head_dim": ("llama", dict(num_key_value_heads=1, head_dim=16, tie_word_embeddings=False)),
    "olmo2_gqa": ("olmo2", dict(num_key_value_heads=2, tie_word_embeddings=False)),
    "olmo2_tied": ("olmo2", dict(num_key_value_heads=4, tie_word_embeddings=True,
                                 rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
}


def make(directory, name):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Olmo2Config, Olmo2ForCausalLM

    family, extra = MODELS[name]
    common = dict(vocab_size=96, hidden_size=32, intermediate_size=80, num_hidden_layers=2, num_attention_heads=4,
                  max_position_embeddings=64, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2)
    common.update(extra)
    config = (LlamaConfig if family == "llama" else Olmo2Config)(**common)
    torch.manual_seed(sorted(MODELS).index(name))
    model = (LlamaForCausalLM if family == "llama" else Olmo2ForCausalLM)(config)
    with torch.no_grad():  # every weight random, norms included, so a swapped tensor shows in the logits
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    shard = "20KB" if name == "llama_tied_llama3" else "50GB"  # one model in shards with an index
    model.save_pretrained(directory, max_shard_size=shard)


def load_config(directory):
    with open(os.path.join(directory, "config.json")) as f:
        return json.load(f)


def save_config(directory, config):
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


def old_style(directory):
    c = load_config(directory)
    rope = c.pop("rope_parameters")
    c["rope_theta"] = rope.pop("rope_theta")
    rope["type"] = rope.pop("rope_type")
    c["rope_scaling"] = rope if rope["type"] != "default" else None
    save_config(directory, c)


def rewrite_tensors(directory, change):
    from safetensors.torch import load_file, save_file

    path = os.path.join(directory, "model.safetensors")
    tensors = load_file(path)
    change(tensors)
    save_file(tensors, path, metadata={"format": "pt"})


def logits(directory, ids):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor([[int(i) for i in ids.split(",")]])).logits[0]
    print(json.dumps({"logits": out.tolist()}))


def compare(a, b, tol):
    import torch

    x = torch.tensor(json.load(open(a))["logits"], dtype=torch.float64)
    y = torch.tensor(json.load(open(b))["logits"], dtype=torch.float64)
    if x.shape != y.shape:
        print("shapes differ: %s vs %s" % (tuple(x.shape), tuple(y.shape)))
        sys.exit(1)
    diff = (x - y).abs().max().item()
    print("max_abs_diff %.3g (logits up to %.3g)" % (diff, x.abs().max().item()))
    sys.exit(0 if diff <= float(tol) else 1)


def same_tensors(a, b):
    from safetensors import safe_open

    with safe_open(a, "pt") as fa, safe_open(b, "pt") as fb:
        names = sorted(fa.keys())
        if names != sorted(fb.keys()):
            print("names differ")
            sys.exit(1)
        for n in names:
            x, y = fa.get_tensor(n), fb.get_tensor(n)
            if x.dtype != y.dtype or x.shape != y.shape or not bool((x == y).all()):
                print("tensor %s differs" % n)
                sys.exit(1)
    print("%d tensors equal" % len(names))


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "check":
        check()
    elif command == "make":
        make(*args)
    elif command == "old_style":
        old_style(*args)
    elif command == "edit":
        c = load_config(args[0])
        c[args[1]] = json.loads(args[2])
        save_config(args[0], c)
    elif command == "drop":
        rewrite_tensors(args[0], lambda t: t.pop(args[1]))
    elif command == "reshape":
        rewrite_tensors(args[0], lambda t: t.update({args[1]: t[args[1]][:-1].clone()}))
    elif command == "logits":
        logits(*args)
    elif command == "compare":
        compare(*args)
    elif command == "same_tensors":
        same_tensors(*args)
    else:
        sys.exit("unknown command " + command)


if __name__ == "__main__":
    main()
