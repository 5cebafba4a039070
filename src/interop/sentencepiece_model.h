// Internal to src/interop: a SentencePiece model file (the ModelProto of sentencepiece_model.proto)
// rebuilt from a vocabulary, so that a GGUF file's embedded llama (SentencePiece) vocabulary becomes a
// tokenizer.model that libsentencepiece, Python's sentencepiece and transformers load.
//
// Only the fields tokenization reads are written: the pieces (text, score, type), a BPE trainer spec
// (llama.cpp's SPM tokenizer merges by piece score, which is SentencePiece's BPE), byte fallback when
// byte pieces exist, the special ids, and an identity normalizer that escapes whitespace, prepends
// the dummy "▁" when asked and keeps repeated whitespace (what llama.cpp's SPM tokenizer does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ffnshape::interop {

// SentencePiece's piece types; llama.cpp's token types use the same numbers.
enum class PieceType : int { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct SentencePieceVocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<PieceType> types;
  int unk_id = 0;   // must name a piece of type unknown
  int bos_id = -1;  // -1: none
  int eos_id = -1;
  int pad_id = -1;
  bool add_dummy_prefix = true;
};

// The serialized ModelProto. std::invalid_argument (with the reason) for a vocabulary SentencePiece
// would refuse: lengths that differ, an unknown type number, no unknown piece at unk_id, a special id
// out of range.
std::string sentencepiece_model_bytes(const SentencePieceVocab& vocab);

// Converts llama.cpp's token type numbers, refusing any outside 1..6.
std::vector<PieceType> piece_types(const std::vector<int64_t>& numbers);

}  // namespace ffnshape::interop
