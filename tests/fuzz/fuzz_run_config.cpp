// The YAML run config, through load_run_config as `ffnshape train` reads it, and the resolved config
// it writes beside a run: a config that loads must survive the round trip (to_yaml, load again) with
// the same architecture and parameter count.
#include "fuzz_support.h"
#include "ffnshape/config/run_config.h"
#include "ffnshape/params/count.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("config.yaml", data, size);
  fuzz::expect_clean_errors([&] {
    const auto config = ffnshape::load_run_config(path);
    const auto count = ffnshape::count_parameters(config.model);
    const std::string resolved = ffnshape::to_yaml(config);
    const auto again = ffnshape::load_run_config_from_string(resolved, {}, "resolved.yaml");
    if (ffnshape::to_yaml(again) != resolved) std::abort();
    if (ffnshape::count_parameters(again.model).total() != count.total()) std::abort();
  });
  return 0;
}
