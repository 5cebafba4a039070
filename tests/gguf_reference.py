"""Reference GGUF files for tests/test_gguf.cpp, written and dequantized by the `gguf` package (llama.cpp's
own Python library), independently of ffnshape.

    python gguf_reference.py fixtures DIR
        DIR/tensors.gguf: metadata of every GGUF value type (the keys and values that test_gguf.cpp
        expects) and tensors of each readable type (F32, F16, BF16, Q8_0, Q4_0, Q4_1; quantized by
        gguf.quants.quantize) plus one Q4_K tensor of raw bytes, with general.alignment 64.
        DIR/reference.gguf: for every readable tensor, gguf.quants.dequantize's float32 values under
        the same name (an F32 tensor of the same shape).

    python gguf_reference.py model FILE DIR [NAME ...]
        DIR/hashes.txt: "name numel hash" for every tensor of FILE, hash = the sum over i of
        bits(x_i) * (2 i + 1) mod 2^64, x the float32 values gguf.quants.dequantize gives and bits their
        uint32 patterns; DIR/reference.gguf: the float32 values of the tensors NAME.

    python gguf_reference.py from_hf HF_DIR FILE [--bad-types]
        FILE: the Hugging Face llama folder HF_DIR (fp32 safetensors, tokenizer.model) as llama.cpp's
        converter writes it: llama.* metadata, F32 tensors under llama.cpp's names with the q / k rows
        in its RoPE order, and the SentencePiece vocabulary as the gguf package's SentencePieceVocab and
        SpecialVocab read it, padded with unused [PADi] pieces to the model's vocab_size. --bad-types writes one token type fewer than there are tokens.
"""
import json
import pathlib
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as Q


def write_metadata(w):
    w.add_uint8("test.uint8", 200)
    w.add_int8("test.int8", -100)
    w.add_uint16("test.uint16", 60000)
    w.add_int16("test.int16", -30000)
    w.add_uint32("test.uint32", 4000000000)
    w.add_int32("test.int32", -2000000000)
    w.add_uint64("test.uint64", 18000000000000000000)
    w.add_int64("test.int64", -9000000000000000000)
    w.add_float32("test.float32", 0.1)
    w.add_float64("test.float64", 0.1)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo ▁wörld")
    w.add_key_value("test.empty_string", "", gguf.GGUFValueType.STRING)  # add_string skips empty strings
    w.add_array("test.strings", ["<unk>", "<s>", "▁the", ""])
    w.add_array("test.floats", [0.0, -1.5, 3.25e-5])
    w.add_array("test.ints", [1, -2, 3])
    w.add_key_value("test.bytes", [1, 2, 255], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.UINT8)
    w.add_array("test.bools", [True, False, True])
    w.add_array("test.nested", [[1, 2], [3, 4, 5]])
    w.add_array("test.nested_strings", [["a", "b"], ["c"]])
    w.add_uint32("llama.block_count", 2)


def tensors():
    rng = np.random.default_rng(12)
    f16 = rng.standard_normal((4, 6)).astype(np.float32)
    # fp16's extremes: subnormals, zero of both signs, infinities, the largest finite value.
    f16.flat[:8] = [6e-8, -3e-6, 0.0, -0.0, np.inf, -np.inf, 65504.0, 1e-4]
    q41 = rng.standard_normal((7, 64)).astype(np.float32)
    q41[0] = 0.5  # a constant block: scale 0
    q80 = rng.standard_normal((6, 96)).astype(np.float32) * 3
    q80[1] = 0.0
    return [
        ("f32", rng.standard_normal((3, 5)).astype(np.float32), Q.F32),
        ("f32_1d", rng.standard_normal(7).astype(np.float32), Q.F32),
        ("f16", f16, Q.F16),
        ("bf16", rng.standard_normal((2, 3, 8)).astype(np.float32), Q.BF16),
        ("q8_0", q80, Q.Q8_0),
        ("q4_0", rng.standard_normal((5, 32)).astype(np.float32), Q.Q4_0),
        ("q4_1", q41, Q.Q4_1),
        ("q4_1_3d", rng.standard_normal((2, 3, 64)).astype(np.float32) * 0.02 + 0.01, Q.Q4_1),
    ]


def fixtures(out_dir):
    w = gguf.GGUFWriter(f"{out_dir}/tensors.gguf", "llama")
    w.add_custom_alignment(64)
    write_metadata(w)
    ref = gguf.GGUFWriter(f"{out_dir}/reference.gguf", "llama")
    for name, values, qtype in tensors():
        if qtype == Q.F32:
            stored = values
            w.add_tensor(name, stored)
        elif qtype == Q.F16:
            stored = values.astype(np.float16)
            w.add_tensor(name, stored)
        else:
            stored = gguf.quants.quantize(values, qtype)
            w.add_tensor(name, stored, raw_dtype=qtype)
        ref.add_tensor(name, gguf.quants.dequantize(stored.view(np.uint8), qtype).astype(np.float32))
    # A type ffnshape does not dequantize: one row of one Q4_K super-block (144 random bytes).
    w.add_tensor("q4_k", np.random.default_rng(3).integers(0, 256, (2, 144), dtype=np.uint8), raw_dtype=Q.Q4_K)
    for writer in (w, ref):
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()


def bits_hash(values):
    bits = np.ascontiguousarray(values, dtype=np.float32).reshape(-1).view(np.uint32).astype(np.uint64)
    weights = np.arange(bits.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return int(np.sum(bits * weights, dtype=np.uint64))  # uint64 arithmetic wraps: mod 2^64


def model(path, out_dir, names):
    reader = gguf.GGUFReader(path)
    ref = gguf.GGUFWriter(f"{out_dir}/reference.gguf", "llama")
    with open(f"{out_dir}/hashes.txt", "w") as hashes:
        for t in reader.tensors:
            values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            hashes.write(f"{t.name} {values.size} {bits_hash(values)}\n")
            if t.name in names:
                ref.add_tensor(t.name, values)
    ref.write_header_to_file()
    ref.write_kv_data_to_file()
    ref.write_tensors_to_file()
    ref.close()


def llama_cpp_name(hf):
    renames = [("self_attn.q_proj", "attn_q"), ("self_attn.k_proj", "attn_k"), ("self_attn.v_proj", "attn_v"),
               ("self_attn.o_proj", "attn_output"), ("input_layernorm", "attn_norm"),
               ("post_attention_layernorm", "ffn_norm"), ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"),
               ("mlp.down_proj", "ffn_down")]
    fixed = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    if hf in fixed:
        return fixed[hf]
    name = hf.replace("model.layers.", "blk.")
    for a, b in renames:
        name = name.replace(a, b)
    return name


def rope_permute(w, heads):  # as llama.cpp's convert_hf_to_gguf.py: half-split rows -> adjacent pairs
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def from_hf(hf_dir, path, bad_types=False):
    from safetensors.numpy import load_file
    hf_dir = pathlib.Path(hf_dir)
    c = json.load(open(hf_dir / "config.json"))
    heads, kv_heads = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(c["max_position_embeddings"])
    w.add_embedding_length(c["hidden_size"])
    w.add_block_count(c["num_hidden_layers"])
    w.add_feed_forward_length(c["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(c["rms_norm_eps"])
    w.add_rope_freq_base(c.get("rope_theta", c.get("rope_parameters", {}).get("rope_theta", 10000.0)))
    w.add_vocab_size(c["vocab_size"])
    vocab = gguf.vocab.SentencePieceVocab(hf_dir)
    tokens, scores, types = (list(x) for x in zip(*vocab.all_tokens()))
    for i in range(len(tokens), c["vocab_size"]):  # the model's rows past the vocabulary, padded as llama.cpp pads them
        tokens.append(f"[PAD{i}]".encode())
        scores.append(-1000.0)
        types.append(gguf.TokenType.UNUSED)
    w.add_tokenizer_model(vocab.tokenizer_model)
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types[:-1] if bad_types else types)
    gguf.vocab.SpecialVocab(hf_dir, n_vocab=len(tokens)).add_to_gguf(w)
    for name, t in load_file(hf_dir / "model.safetensors").items():
        t = t.astype(np.float32)
        if name.endswith("q_proj.weight"):
            t = rope_permute(t, heads)
        if name.endswith("k_proj.weight"):
            t = rope_permute(t, kv_heads)
        w.add_tensor(llama_cpp_name(name), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    elif sys.argv[1] == "from_hf":
        from_hf(sys.argv[2], sys.argv[3], "--bad-types" in sys.argv[4:])
    else:
        model(sys.argv[2], sys.argv[3], set(sys.argv[4:]))
