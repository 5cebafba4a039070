"""Token shards in the llm.c format from an independent (Python) writer, for the CLI end-to-end tests.

    python3 tests/llmc_shards.py DIR [VAL_TOKENS]    writes DIR/train_0.bin (30000) and DIR/val_0.bin

As a module: shard(path, tokens, ...) and text(n), a patterned language (each token determines the
next few, so the loss can fall) drawn from one seeded generator.
"""
import random
import struct
import sys

rng = random.Random(0)


def shard(path, tokens, magic=20240520, version=1, fmt="H", count=None):
    header = [0] * 256
    header[0], header[1], header[2] = magic, version, len(tokens) if count is None else count
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(struct.pack("<%d%s" % (len(tokens), fmt), *tokens))


def text(n):
    out = []
    while len(out) < n:
        a = rng.randrange(40)
        out += [a, (a * 7) % 61, (a * 13) % 61, 61 + a % 3]
    return out[:n]


if __name__ == "__main__":
    directory = sys.argv[1]
    shard(directory + "/train_0.bin", text(30000))
    shard(directory + "/val_0.bin", text(int(sys.argv[2]) if len(sys.argv) > 2 else 5000))
