// Internal: what a report says about the machine its runs trained on.
#pragma once

#include <cstdint>
#include <string>

namespace ffnshape {

// E.g. "Intel(R) Xeon(R) Platinum 8488C, 2 cores, avx512_bf16 amx_bf16" or "..., 16 cores, avx2
// only (bf16 emulated), 1 NVIDIA GPU"; from /proc, so on other systems less is known.
std::string describe_host();

// The cores this process may use (at least 1).
int64_t machine_cores();

}  // namespace ffnshape
