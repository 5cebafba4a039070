#include "sentencepiece_model.h"

#include <cstring>
#include <stdexcept>

namespace ffnshape::interop {
namespace {

// Protocol-buffer wire format, just what ModelProto needs: varints, 32-bit floats and
// length-delimited fields (strings and sub-messages).
class ProtoWriter {
 public:
  void varint_field(int field, int64_t value) {
    key(field, 0);
    varint(static_cast<uint64_t>(value));  // negative int32 values take ten bytes, as protobuf writes them
  }
  void float_field(int field, float value) {
    key(field, 5);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  void bytes_field(int field, const std::string& bytes) {
    key(field, 2);
    varint(bytes.size());
    out_ += bytes;
  }
  const std::string& bytes() const { return out_; }

 private:
  void key(int field, int wire_type) { varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type)); }
  void varint(uint64_t v) {
    do {
      const auto low = static_cast<char>(v & 0x7f);
      v >>= 7;
      out_.push_back(static_cast<char>(low | (v ? 0x80 : 0)));
    } while (v);
  }
  std::string out_;
};

// Field numbers of sentencepiece_model.proto.
constexpr int kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3;
constexpr int kPieceText = 1, kPieceScore = 2, kPieceType = 3;
constexpr int kModelType = 3, kVocabSize = 4, kByteFallback = 35, kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43;
constexpr int kNormalizerName = 1, kAddDummyPrefix = 3, kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5;
constexpr int kBpe = 2;

void check(const SentencePieceVocab& v) {
  const auto n = v.pieces.size();
  if (n == 0) throw std::invalid_argument("the vocabulary is empty");
  if (v.scores.size() != n || v.types.size() != n) {
    throw std::invalid_argument("the vocabulary has " + std::to_string(n) + " pieces but " + std::to_string(v.scores.size()) +
                                " scores and " + std::to_string(v.types.size()) + " types");
  }
  auto in_range = [&](int id) { return id >= 0 && static_cast<size_t>(id) < n; };
  if (!in_range(v.unk_id) || v.types[v.unk_id] != PieceType::unknown) {
    throw std::invalid_argument("the unknown-token id " + std::to_string(v.unk_id) + " names no piece of type unknown");
  }
  for (const auto& [name, id] : {std::pair{"bos", v.bos_id}, {"eos", v.eos_id}, {"pad", v.pad_id}}) {
    if (id != -1 && !in_range(id)) {
      throw std::invalid_argument(std::string("the ") + name + " id " + std::to_string(id) + " is outside the " +
                                  std::to_string(n) + "-piece vocabulary");
    }
  }
}

}  // namespace

std::vector<PieceType> piece_types(const std::vector<int64_t>& numbers) {
  std::vector<PieceType> types;
  types.reserve(numbers.size());
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] < 1 || numbers[i] > 6) {
      throw std::invalid_argument("token " + std::to_string(i) + " has type " + std::to_string(numbers[i]) +
                                  " (SentencePiece types are 1 to 6)");
    }
    types.push_back(static_cast<PieceType>(numbers[i]));
  }
  return types;
}

std::string sentencepiece_model_bytes(const SentencePieceVocab& v) {
  check(v);
  ProtoWriter model;
  bool has_bytes = false;
  for (size_t i = 0; i < v.pieces.size(); ++i) {
    ProtoWriter piece;
    piece.bytes_field(kPieceText, v.pieces[i]);
    piece.float_field(kPieceScore, v.scores[i]);
    piece.varint_field(kPieceType, static_cast<int>(v.types[i]));
    model.bytes_field(kPieces, piece.bytes());
    has_bytes = has_bytes || v.types[i] == PieceType::byte;
  }
  ProtoWriter trainer;
  trainer.varint_field(kModelType, kBpe);
  trainer.varint_field(kVocabSize, static_cast<int64_t>(v.pieces.size()));
  trainer.varint_field(kByteFallback, has_bytes ? 1 : 0);
  trainer.varint_field(kUnkId, v.unk_id);
  trainer.varint_field(kBosId, v.bos_id);
  trainer.varint_field(kEosId, v.eos_id);
  trainer.varint_field(kPadId, v.pad_id);
  model.bytes_field(kTrainerSpec, trainer.bytes());
  ProtoWriter normalizer;
  normalizer.bytes_field(kNormalizerName, "identity");
  normalizer.varint_field(kAddDummyPrefix, v.add_dummy_prefix ? 1 : 0);
  normalizer.varint_field(kRemoveExtraWhitespaces, 0);
  normalizer.varint_field(kEscapeWhitespaces, 1);
  model.bytes_field(kNormalizerSpec, normalizer.bytes());
  return model.bytes();
}

}  // namespace ffnshape::interop
