// Unicode normalization forms (tokenizers' NFC, NFD, NFKC, NFKD normalizers) through ICU. ASCII is
// already in every form, so ASCII text skips ICU and its UTF-16 round trip.
//
// tokenizers normalizes with Unicode 9.0's data (its unicode-normalization-alignments crate): marks
// added later are, to it, unassigned starters that are neither reordered nor composed. ICU's filtered
// normalizer over the characters assigned by 9.0 does exactly that, so the ids agree on new marks too.
#include <unicode/unorm2.h>
#include <unicode/uset.h>
#include <unicode/ustring.h>

#include "hf_tokenizer_parts.h"

namespace ffnshape::hf {
namespace {

const UNormalizer2* base_instance(Normalizer::Form form, UErrorCode* status) {
  switch (form) {
    case Normalizer::Form::kNfc: return unorm2_getNFCInstance(status);
    case Normalizer::Form::kNfd: return unorm2_getNFDInstance(status);
    case Normalizer::Form::kNfkc: return unorm2_getNFKCInstance(status);
    case Normalizer::Form::kNfkd: return unorm2_getNFKDInstance(status);
    case Normalizer::Form::kNone: break;
  }
  return nullptr;
}

// The form restricted to Unicode 9.0's characters; built once per form and kept (ICU's normalizers
// are safe to share between threads).
const UNormalizer2* instance(Normalizer::Form form, UErrorCode* status) {
  static const auto make = [](Normalizer::Form f) -> const UNormalizer2* {
    UErrorCode error = U_ZERO_ERROR;
    static const std::u16string pattern = u"[:age=9.0:]";
    USet* assigned = uset_openPattern(pattern.data(), static_cast<int32_t>(pattern.size()), &error);
    const UNormalizer2* base = base_instance(f, &error);
    if (U_FAILURE(error)) return nullptr;
    uset_freeze(assigned);
    return unorm2_openFiltered(base, assigned, &error);  // keeps `assigned`, which lives on with it
  };
  static const UNormalizer2* const forms[] = {nullptr, make(Normalizer::Form::kNfc), make(Normalizer::Form::kNfd),
                                              make(Normalizer::Form::kNfkc), make(Normalizer::Form::kNfkd)};
  const UNormalizer2* normalizer = forms[static_cast<int>(form)];
  if (!normalizer) *status = U_MISSING_RESOURCE_ERROR;
  return normalizer;
}

void check(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) throw DataError(std::string("Unicode normalization failed (") + what + "): " + u_errorName(status));
}

std::string normalize(std::string_view text, Normalizer::Form form) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = instance(form, &status);
  check(status, "ICU data");
  std::u16string wide(text.size() + 1, u'\0');
  int32_t wide_length = 0;
  u_strFromUTF8(wide.data(), static_cast<int32_t>(wide.size()), &wide_length, text.data(),
                static_cast<int32_t>(text.size()), &status);
  check(status, "from UTF-8");
  std::u16string normalized(static_cast<size_t>(wide_length) * 4 + 16, u'\0');  // NFKD grows by at most 18x per char, rarely
  int32_t length = unorm2_normalize(normalizer, wide.data(), wide_length, normalized.data(),
                                    static_cast<int32_t>(normalized.size()), &status);
  if (status == U_BUFFER_OVERFLOW_ERROR) {
    status = U_ZERO_ERROR;
    normalized.assign(static_cast<size_t>(length), u'\0');
    length = unorm2_normalize(normalizer, wide.data(), wide_length, normalized.data(), length, &status);
  }
  check(status, "normalize");
  std::string out(static_cast<size_t>(length) * 3, '\0');
  int32_t out_length = 0;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_length, normalized.data(), length, &status);
  check(status, "to UTF-8");
  out.resize(static_cast<size_t>(out_length));
  return out;
}

bool ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<uint8_t>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

std::string_view Normalizer::apply(std::string_view text, std::string& scratch) const {
  if (forms_.empty() || ascii(text)) return text;
  scratch.assign(text);
  for (Form form : forms_) scratch = normalize(scratch, form);
  return scratch;
}

}  // namespace ffnshape::hf
