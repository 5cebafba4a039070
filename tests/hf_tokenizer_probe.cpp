// Encodes texts with ffnshape's tokenizer.json reader for tests/hf_tokenizer_test.sh.
//   hf_tokenizer_probe TOKENIZER_JSON TEXTS OUT
// TEXTS: records of a little-endian uint32 byte length and the bytes (any bytes, UTF-8 or not).
// OUT: one line per text, "ID ID ...<TAB>HEX", HEX being the decode of those ids (special tokens kept).
// The texts are encoded with encode_batch on two threads, and each also alone: the two must agree.
// OUT.special: "BOS EOS PAD UNK" and, on a second line, encode_with_special_tokens("Hello world").
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "ffnshape/data/hf_tokenizer.h"

namespace {

std::vector<std::string> read_texts(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ffnshape::DataError("cannot open " + path);
  std::vector<std::string> texts;
  unsigned char header[4];
  while (in.read(reinterpret_cast<char*>(header), 4)) {
    const uint32_t length = header[0] | (header[1] << 8) | (header[2] << 16) | (uint32_t(header[3]) << 24);
    std::string text(length, '\0');
    if (!in.read(text.data(), length)) throw ffnshape::DataError("truncated record in " + path);
    texts.push_back(std::move(text));
  }
  return texts;
}

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: hf_tokenizer_probe TOKENIZER_JSON TEXTS OUT\n";
    return 2;
  }
  try {
    const auto tokenizer = ffnshape::HfTokenizer::load(argv[1]);
    const auto texts = read_texts(argv[2]);
    const auto batch = tokenizer.encode_batch(texts, 2);
    std::ofstream out(argv[3]);
    for (size_t i = 0; i < texts.size(); ++i) {
      if (tokenizer.encode(texts[i]) != batch[i]) {
        std::cerr << "text " << i << ": encode_batch and encode differ\n";
        return 1;
      }
      for (size_t k = 0; k < batch[i].size(); ++k) out << (k ? " " : "") << batch[i][k];
      out << '\t' << hex(tokenizer.decode(batch[i])) << '\n';
    }
    std::ofstream special(std::string(argv[3]) + ".special");
    special << tokenizer.bos_id() << ' ' << tokenizer.eos_id() << ' ' << tokenizer.pad_id() << ' '
            << tokenizer.unk_id() << '\n';
    const auto hello = tokenizer.encode_with_special_tokens("Hello world");
    for (size_t k = 0; k < hello.size(); ++k) special << (k ? " " : "") << hello[k];
    special << '\n';
    return 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
}
