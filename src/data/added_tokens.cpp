// Added tokens (special or not) are cut out of the text before anything else, as tokenizers'
// AddedVocabulary does: leftmost-longest matches (its Aho-Corasick automaton's MatchKind), then the
// single_word, lstrip and rstrip rules of the matched token.
#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

// The last character of text[..end] (or the first of text[start..]) is alphanumeric: Rust's
// char::is_alphanumeric, the Alphabetic property or a numeric category.
bool alphanumeric(std::string_view character) {
  static const Regex pattern("[\\p{Alphabetic}\\p{N}]", "added token word boundary");
  bool found = false;
  pattern.for_each_match(character, [&](size_t, size_t) { found = true; });
  return found;
}

size_t previous_char_start(std::string_view text, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<uint8_t>(text[i]) & 0xC0) == 0x80) --i;
  return i;
}

bool word_ends_at(std::string_view text, size_t end) {
  if (end == 0) return false;
  const size_t start = previous_char_start(text, end);
  return alphanumeric(text.substr(start, end - start));
}

bool word_starts_at(std::string_view text, size_t start) {
  if (start >= text.size()) return false;
  size_t length = 0;
  code_point_at(text, start, &length);
  return alphanumeric(text.substr(start, length));
}

// Where the white space that ends text[..end] begins (lstrip).
size_t white_space_start(std::string_view text, size_t end) {
  while (end > 0) {
    const size_t start = previous_char_start(text, end);
    size_t length = 0;
    if (!is_unicode_white_space(code_point_at(text, start, &length))) break;
    end = start;
  }
  return end;
}

// Where the white space that starts text[start..] ends (rstrip).
size_t white_space_end(std::string_view text, size_t start) {
  while (start < text.size()) {
    size_t length = 0;
    if (!is_unicode_white_space(code_point_at(text, start, &length))) break;
    start += length;
  }
  return start;
}

}  // namespace

void AddedTokenMatcher::add(const AddedToken& token, std::string pattern) {
  if (pattern.empty()) return;  // tokenizers never matches an empty token
  int node = 0;
  for (char c : pattern) {
    const auto byte = static_cast<uint8_t>(c);
    int next = -1;
    for (const auto& [label, child] : nodes_[node].children) {
      if (label == byte) next = child;
    }
    if (next < 0) {
      next = static_cast<int>(nodes_.size());
      nodes_[node].children.emplace_back(byte, next);
      nodes_.emplace_back();
    }
    node = next;
  }
  first_byte_[static_cast<uint8_t>(pattern[0])] = true;
  if (nodes_[node].token < 0) {  // the same text twice: the first token keeps it
    nodes_[node].token = static_cast<int>(tokens_.size());
    tokens_.push_back(token);
  }
}

size_t AddedTokenMatcher::longest_match_at(std::string_view text, size_t start, int* token) const {
  size_t longest = 0;
  int node = 0;
  for (size_t i = start; i < text.size(); ++i) {
    int next = -1;
    for (const auto& [label, child] : nodes_[node].children) {
      if (label == static_cast<uint8_t>(text[i])) next = child;
    }
    if (next < 0) break;
    node = next;
    if (nodes_[node].token >= 0) {
      longest = i + 1 - start;
      *token = nodes_[node].token;
    }
  }
  return longest;
}

void AddedTokenMatcher::split(std::string_view text, TextSink on_text, IdSink on_token) const {
  if (tokens_.empty()) {
    if (!text.empty()) on_text(text);
    return;
  }
  size_t done = 0;  // end of the last token taken
  size_t i = 0;     // where the search resumes
  while (i < text.size()) {
    int index = -1;
    const size_t length = first_byte_[static_cast<uint8_t>(text[i])] ? longest_match_at(text, i, &index) : 0;
    if (length == 0) {
      ++i;
      continue;
    }
    const AddedToken& token = tokens_[index];
    size_t start = i, stop = i + length;
    i = stop;
    if (token.single_word && (word_ends_at(text, start) || word_starts_at(text, stop))) continue;
    if (token.lstrip) start = std::max(white_space_start(text, start), done);
    if (token.rstrip) stop = white_space_end(text, stop);
    if (start > done) on_text(text.substr(done, start - done));
    on_token(token.id);
    done = i = stop;
  }
  if (done < text.size()) on_text(text.substr(done));
}

}  // namespace ffnshape::hf
