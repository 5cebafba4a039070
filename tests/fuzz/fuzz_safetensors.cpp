// safetensors reader: the JSON header (names, dtypes, shapes, offsets, metadata) and every tensor.
#include "fuzz_support.h"
#include "ffnshape/interop/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("model.safetensors", data, size);
  fuzz::expect_clean_errors([&] {
    const ffnshape::interop::SafetensorsFile file(path);
    for (const auto& name : file.names()) {
      const auto tensor = file.tensor(name);
      if (tensor.numel() > 0 && tensor.is_floating_point()) (void)tensor.to(torch::kFloat).sum().item<float>();
      else if (tensor.numel() > 0) (void)tensor.to(torch::kLong).sum().item<int64_t>();
    }
  });
  return 0;
}
