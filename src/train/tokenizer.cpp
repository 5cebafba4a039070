#include "ffnshape/train/tokenizer.h"

#include "../common/parallel_items.h"

#include <dlfcn.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_map>

// SentencePiece is loaded at run time, not linked. Debian's libsentencepiece bundles its own protobuf
// (3.14) and exports it; linked into a process with libtorch's libprotobuf (3.21) the two interpose
// and the process crashes before main. Opened with RTLD_LOCAL | RTLD_DEEPBIND it binds to its own
// copy and libtorch never sees it. Virtual calls need no symbols; util::Status is the one class
// whose out-of-line members this file uses, so they are defined here, on SentencePiece's layout.
namespace sentencepiece::util {

struct Status::Rep {  // SentencePiece 0.1.9x's layout; the tests check messages read through it
  StatusCode code;
  std::string error_message;
};
Status::~Status() = default;
StatusCode Status::code() const { return rep_ ? rep_->code : StatusCode::kOk; }
std::string Status::ToString() const {
  static const char* const names[] = {
      "OK",        "Cancelled",     "Unknown",  "Invalid argument", "Deadline exceeded", "Not found",
      "Already exists", "Permission denied", "Resource exhausted", "Failed precondition", "Aborted",
      "Out of range", "Unimplemented", "Internal", "Unavailable", "Data loss", "Unauthenticated"};
  if (!rep_) return "OK";
  const auto index = static_cast<size_t>(rep_->code);
  return std::string(index < std::size(names) ? names[index] : "Unknown") + ": " + rep_->error_message;
}

}  // namespace sentencepiece::util

namespace ffnshape {
namespace {

namespace fs = std::filesystem;

using TrainFn = sentencepiece::util::Status (*)(const std::unordered_map<std::string, std::string>&,
                                               sentencepiece::SentenceIterator*, std::string*);

struct SentencePieceLibrary {
  void (*construct)(void*) = nullptr;  // SentencePieceProcessor::SentencePieceProcessor()
  TrainFn train = nullptr;             // SentencePieceTrainer::Train(kwargs, iterator, proto)
};

#if defined(__SANITIZE_ADDRESS__)
#define FFNSHAPE_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FFNSHAPE_ADDRESS_SANITIZER 1
#endif
#endif

SentencePieceLibrary open_sentencepiece() {
#ifdef FFNSHAPE_ADDRESS_SANITIZER
  // AddressSanitizer refuses RTLD_DEEPBIND (it would bypass its interceptors) and stops the process;
  // without it SentencePiece would bind to LibTorch's protobuf (above). So no SentencePiece here.
  throw DataError("SentencePiece tokenizers are not available in an AddressSanitizer build: the library must be "
                  "opened with RTLD_DEEPBIND, which the sanitizer refuses"
                  "\n  fix: use the ordinary build (scripts/build.sh), or a tokenizer.json tokenizer");
#endif
  const std::string names[] = {
#ifdef FFNSHAPE_SENTENCEPIECE_LIBDIR
      std::string(FFNSHAPE_SENTENCEPIECE_LIBDIR) + "/libsentencepiece_train.so.0",
#endif
      "libsentencepiece_train.so.0", "libsentencepiece_train.so"};
  void* handle = nullptr;
  std::string errors;
  for (const auto& name : names) {
    if ((handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND))) break;
    errors += std::string("\n  ") + dlerror();
  }
  if (!handle) {
    throw DataError("cannot load the SentencePiece library:" + errors +
                    "\n  fix: install libsentencepiece0 (bash scripts/setup.sh installs libsentencepiece-dev)");
  }
  SentencePieceLibrary lib;
  lib.construct = reinterpret_cast<void (*)(void*)>(dlsym(handle, "_ZN13sentencepiece22SentencePieceProcessorC1Ev"));
  lib.train = reinterpret_cast<TrainFn>(dlsym(
      handle,
      "_ZN13sentencepiece20SentencePieceTrainer5TrainERKSt13unordered_mapINSt7__cxx1112basic_stringIcSt11char_"
      "traitsIcESaIcEEES7_St4hashIS7_ESt8equal_toIS7_ESaISt4pairIKS7_S7_EEEPNS_16SentenceIteratorEPS7_"));
  if (!lib.construct || !lib.train) {
    throw DataError("the SentencePiece library lacks the expected functions (an incompatible version?)"
                    "\n  fix: install Debian's libsentencepiece0 0.1.9x");
  }
  return lib;
}

const SentencePieceLibrary& sentencepiece_library() {
  static const SentencePieceLibrary lib = open_sentencepiece();  // retried on the next call if it threw
  return lib;
}

std::shared_ptr<sentencepiece::SentencePieceProcessor> new_processor() {
  using Processor = sentencepiece::SentencePieceProcessor;
  const auto& lib = sentencepiece_library();
  void* memory = ::operator new(sizeof(Processor));
  lib.construct(memory);
  // The virtual destructor runs through the vtable, so no destructor symbol is needed here.
  return std::shared_ptr<Processor>(static_cast<Processor*>(memory), [](Processor* p) {
    p->~Processor();
    ::operator delete(p);
  });
}

// Special pieces (unk, bos, eos, pad) plus the 256 byte-fallback pieces: the floor of any vocabulary.
constexpr int kReservedPieces = 4 + 256;

// SentencePiece's training flags, each chosen so that text round-trips exactly.
std::unordered_map<std::string, std::string> trainer_flags(const std::string& inputs, const std::string& prefix,
                                                           int vocab_size, int threads) {
  return {
      {"input", inputs},
      {"model_prefix", prefix},
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocab_size)},
      {"num_threads", std::to_string(threads)},
      {"byte_fallback", "true"},        // unseen characters become byte pieces, never <unk>
      {"character_coverage", "1.0"},    // every character of the training text gets a piece
      {"normalization_rule_name", "identity"},  // NFKC would rewrite text (e.g. ligatures, full-width)
      {"remove_extra_whitespaces", "false"},    // keep runs of spaces as written
      {"allow_whitespace_only_pieces", "true"},  // indentation becomes single pieces
      {"split_digits", "true"},          // numbers tokenise digit by digit, as in LLaMA
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "3"},
      {"minloglevel", "1"},              // warnings and errors only; the INFO log is thousands of lines
      {"max_sentence_length", "65536"},  // a line is a paragraph in some corpora (default 4192 bytes)
  };
}

// The trainer splits its input list at commas and reads files itself: check them here so a bad path
// is a clear DataError rather than a message buried in its log.
std::string checked_inputs(const std::vector<std::string>& text_files) {
  if (text_files.empty()) {
    throw DataError("tokenizer training: no text files given\n  fix: pass at least one plain-text file");
  }
  std::string joined;
  for (const auto& file : text_files) {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      throw DataError("tokenizer training: text file '" + file + "' does not exist or is not a file" +
                      "\n  fix: check the path (scripts/fetch_corpus.sh writes data/bigtxt/text/*.txt)");
    }
    if (fs::file_size(file, ec) == 0) {
      throw DataError("tokenizer training: text file '" + file + "' is empty\n  fix: remove it from the list");
    }
    if (file.find(',') != std::string::npos) {
      throw DataError("tokenizer training: text file '" + file + "' has a comma in its path, which SentencePiece " +
                      "reads as a list separator\n  fix: rename or link the file");
    }
    joined += (joined.empty() ? "" : ",") + file;
  }
  return joined;
}

// tokenizer.json by name, or by content (JSON starts with '{'; a SentencePiece model is a protobuf).
bool is_tokenizer_json(const std::string& path) {
  if (fs::path(path).extension() == ".json") return true;
  if (fs::path(path).extension() == ".model") return false;
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  return in && c == '{';
}

void check_status(const sentencepiece::util::Status& status, const std::string& what, const std::string& hint) {
  if (status.ok()) return;
  throw DataError(what + ": " + status.ToString() + (hint.empty() ? "" : "\n  fix: " + hint));
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& model_path) {
  std::error_code ec;
  if (!fs::is_regular_file(model_path, ec)) {
    throw DataError("tokenizer model '" + model_path + "' does not exist or is not a file" +
                    "\n  fix: check the path, or train one with 'ffnshape data prepare'");
  }
  if (is_tokenizer_json(model_path)) {
    return Tokenizer(std::make_shared<const HfTokenizer>(HfTokenizer::load(model_path)), model_path);
  }
  auto sp = new_processor();
  check_status(sp->Load(model_path), "cannot load tokenizer model '" + model_path + "'",
               "the file is not a SentencePiece .model (or is truncated); train it again");
  return Tokenizer(std::move(sp), model_path);
}

Tokenizer Tokenizer::train(const std::vector<std::string>& text_files, const std::string& model_prefix, int vocab_size,
                           int threads) {
  // Validated here because the trainer may abort the process on values it does not expect.
  if (vocab_size <= kReservedPieces) {
    throw DataError("tokenizer training: vocab_size " + std::to_string(vocab_size) + " is too small; " +
                    std::to_string(kReservedPieces) + " ids are reserved for special and byte pieces" +
                    "\n  fix: use a vocab_size above " + std::to_string(kReservedPieces) +
                    " plus the number of distinct characters (e.g. 8192)");
  }
  if (threads < 1) {
    throw DataError("tokenizer training: threads must be at least 1, got " + std::to_string(threads));
  }
  if (model_prefix.empty()) {
    throw DataError("tokenizer training: empty model prefix\n  fix: pass e.g. data/bigtxt/tokenizer");
  }
  const std::string inputs = checked_inputs(text_files);
  const fs::path dir = fs::path(model_prefix).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) {
    throw DataError("tokenizer training: cannot create directory '" + dir.string() + "': " + ec.message() +
                    "\n  fix: choose a writable model prefix");
  }
  const auto status =
      sentencepiece_library().train(trainer_flags(inputs, model_prefix, vocab_size, threads), nullptr, nullptr);
  using sentencepiece::util::StatusCode;
  const bool io = status.code() == StatusCode::kPermissionDenied || status.code() == StatusCode::kNotFound;
  check_status(status, "tokenizer training failed",
               io ? "check that the text files are readable and '" + model_prefix + ".model' can be written"
                  : "choose a vocab_size within the bounds the message gives: above 260 plus the distinct "
                    "characters of the text, and no more than the text can supply (more text allows more)");
  return load(model_prefix + ".model");
}

std::vector<uint32_t> Tokenizer::encode(const std::string& text) const {
  if (hf_) return hf_->encode(text);
  std::vector<int> ids;
  check_status(sp_->Encode(text, &ids), "cannot encode text with '" + model_path_ + "'", "");
  return std::vector<uint32_t>(ids.begin(), ids.end());
}

std::vector<uint32_t> Tokenizer::encode_with_special_tokens(const std::string& text) const {
  if (hf_) return hf_->encode_with_special_tokens(text);
  std::vector<uint32_t> ids;
  if (bos_id() >= 0) ids.push_back(static_cast<uint32_t>(bos_id()));
  const auto body = encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

std::string Tokenizer::decode(const std::vector<uint32_t>& ids) const {
  if (hf_) return hf_->decode(ids, /*skip_special_tokens=*/true);
  const auto size = static_cast<uint32_t>(vocab_size());
  std::vector<int> signed_ids;
  signed_ids.reserve(ids.size());
  for (uint32_t id : ids) {
    if (id >= size) {
      throw DataError("token id " + std::to_string(id) + " is outside the vocabulary of '" + model_path_ +
                      "' (size " + std::to_string(size) + ")\n  fix: use the tokenizer the shards were made with");
    }
    signed_ids.push_back(static_cast<int>(id));
  }
  std::string text;
  check_status(sp_->Decode(signed_ids, &text), "cannot decode ids with '" + model_path_ + "'", "");
  return text;
}

std::vector<std::vector<uint32_t>> Tokenizer::encode_batch(const std::vector<std::string>& texts,
                                                           int threads) const {
  std::vector<std::vector<uint32_t>> out(texts.size());
  if (texts.empty()) return out;
  const auto n_threads = static_cast<size_t>(std::clamp<int64_t>(threads, 1, static_cast<int64_t>(texts.size())));
  if (hf_) return hf_->encode_batch(texts, static_cast<int>(n_threads));
  for_each_item_parallel(texts.size(), static_cast<int>(n_threads), [&](size_t i) { out[i] = encode(texts[i]); });
  return out;
}

int Tokenizer::vocab_size() const { return hf_ ? hf_->vocab_size() : sp_->GetPieceSize(); }
int Tokenizer::unk_id() const { return hf_ ? hf_->unk_id() : sp_->unk_id(); }
int Tokenizer::bos_id() const { return hf_ ? hf_->bos_id() : sp_->bos_id(); }
int Tokenizer::eos_id() const { return hf_ ? hf_->eos_id() : sp_->eos_id(); }
int Tokenizer::pad_id() const { return hf_ ? hf_->pad_id() : sp_->pad_id(); }
std::string Tokenizer::piece(int id) const {
  if (hf_) return hf_->id_to_token(id);
  if (id < 0 || id >= vocab_size()) {
    throw DataError("token id " + std::to_string(id) + " is outside the " + std::to_string(vocab_size()) +
                    "-piece vocabulary of '" + model_path_ + "'");
  }
  return sp_->IdToPiece(id);
}

}  // namespace ffnshape
