// Work profiles (the JSON `ffnshape profile` writes and `schedule` reads).
#include "fuzz_support.h"
#include "ffnshape/schedule/work_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("profile.json", data, size);
  fuzz::expect_clean_errors([&] {
    const auto profile = ffnshape::schedule::read_work_profile(path);
    for (const auto& [key, values] : profile.work) (void)profile.work_of(key);
  });
  return 0;
}
