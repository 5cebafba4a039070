// The pre-tokenizer: regex splits (Split, Digits) in the file's order, then ByteLevel's optional
// prefix space and GPT-2 pattern. Each stage refines the pieces of the one before, as a tokenizers
// Sequence does; the byte-to-character mapping is left to the BPE model, which works on bytes.
#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {

void PreTokenizer::run(std::string_view text, TextSink on_word) const {
  if (!text.empty()) split_from(0, text, on_word);
}

// Isolated: the text between matches and each match become pieces; Removed drops the matches.
void PreTokenizer::split_from(size_t step, std::string_view piece, TextSink on_word) const {
  if (step == splits.size()) {
    byte_level(piece, on_word);
    return;
  }
  const SplitStep& split = splits[step];
  size_t done = 0;
  split.regex.for_each_match(piece, [&](size_t start, size_t end) {
    if (start > done) split_from(step + 1, piece.substr(done, start - done), on_word);
    if (split.keep_matches) split_from(step + 1, piece.substr(start, end - start), on_word);
    done = end;
  });
  if (done < piece.size()) split_from(step + 1, piece.substr(done), on_word);
}

void PreTokenizer::byte_level(std::string_view piece, TextSink on_word) const {
  std::string prefixed;
  if (add_prefix_space && piece.front() != ' ') {
    prefixed.reserve(piece.size() + 1);
    prefixed.append(" ").append(piece);
    piece = prefixed;
  }
  if (!byte_level_regex) {
    on_word(piece);
    return;
  }
  size_t done = 0;
  byte_level_regex->for_each_match(piece, [&](size_t start, size_t end) {
    if (start > done) on_word(piece.substr(done, start - done));
    on_word(piece.substr(start, end - start));
    done = end;
  });
  if (done < piece.size()) on_word(piece.substr(done));
}

}  // namespace ffnshape::hf
