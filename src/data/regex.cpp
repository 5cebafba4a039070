// Split patterns of tokenizer.json files, run by PCRE2 (UTF, Unicode properties, JIT). The files
// were written for Oniguruma, the engine of the `tokenizers` package; the two agree on the syntax the
// known patterns use except \s, which PCRE2 widens with U+180E, so \s and \S are spelled out here.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

// Unicode's White_Space property as class items (PropList.txt; Oniguruma's \s).
constexpr const char* kWhiteSpaceItems = "\\t-\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
                                         "\\x{202F}\\x{205F}\\x{3000}";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof buffer);
  return reinterpret_cast<const char*>(buffer);
}

DataError unsupported_escape(const std::string& pattern, const std::string& where, char escape) {
  return DataError(where + ": the pattern \"" + pattern + "\" uses \\" + escape +
                   ", whose Unicode meaning differs between regex engines; it is not supported" +
                   "\n  fix: write the class out with Unicode properties, e.g. [\\p{L}\\p{N}_] for \\w");
}

// Per-thread match state: match data for one pair, a JIT stack that grows to 8 MiB, and no match
// limit: Llama 3's \s*[\r\n]+ backtracks once over a whole run of spaces (linear work, but past
// PCRE2's default limit of ten million steps on a 20 MB run), and Oniguruma has no such limit.
struct MatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  MatchState() {
    pcre2_jit_stack_assign(context, nullptr, stack);
    pcre2_set_match_limit(context, UINT32_MAX);
  }
  ~MatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

}  // namespace

const char* const kGpt2SplitPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string oniguruma_compatible(const std::string& pattern, const std::string& where) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 'w' || e == 'W' || e == 'b' || e == 'B') throw unsupported_escape(pattern, where, e);
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpaceItems) : "[" + std::string(kWhiteSpaceItems) + "]";
      } else if (e == 'S') {
        if (in_class) throw unsupported_escape(pattern, where, e);
        out += "[^" + std::string(kWhiteSpaceItems) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // a literal ] first
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

Regex::Regex(const std::string& pattern, const std::string& where, bool literal) {
  const std::string compiled = literal ? pattern : oniguruma_compatible(pattern, where);
  int error = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : 0);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled.data()), compiled.size(), options, &error,
                                   &offset, nullptr);
  if (!code) {
    throw DataError(where + ": the pattern \"" + pattern + "\" does not compile: " + pcre2_message(error) +
                    " (at offset " + std::to_string(offset) + ")\n  fix: correct the regular expression");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT (an unsupported CPU) pcre2_match still works
  code_ = std::shared_ptr<void>(code, [](void* c) { pcre2_code_free(static_cast<pcre2_code*>(c)); });
}

void Regex::for_each_match(std::string_view text, FunctionRef<void(size_t, size_t)> on_match) const {
  thread_local MatchState state;
  auto* code = static_cast<pcre2_code*>(code_.get());
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start < text.size()) {
    int rc = pcre2_jit_match(code, subject, text.size(), start, 0, state.data, state.context);
    if (rc == PCRE2_ERROR_JIT_BADOPTION || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, state.data, state.context);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) throw DataError("the tokenizer's split pattern failed on a text: " + pcre2_message(rc));
    // Copied before the callback, which may run another pattern on this thread's match data.
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    const size_t match_start = ovector[0], match_end = ovector[1];
    if (match_end > match_start) {
      on_match(match_start, match_end);
      start = match_end;
    } else {  // an empty match: step over one character, as Oniguruma's search loop does
      start = match_end + 1;
      while (start < text.size() && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) ++start;
    }
  }
}

}  // namespace ffnshape::hf
