// Zero-shot task files (ARC, HellaSwag, PIQA JSONL), in each format, with HellaSwag's preprocessing.
#include "fuzz_support.h"
#include "ffnshape/eval/tasks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ffnshape::eval::TaskFormat;
  const std::string path = fuzz::write_file("task.jsonl", data, size);
  for (const auto format : {TaskFormat::arc, TaskFormat::hellaswag, TaskFormat::piqa}) {
    fuzz::expect_clean_errors([&] { (void)ffnshape::eval::load_task(path, format); });
  }
  return 0;
}
