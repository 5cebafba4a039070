// Small text helpers shared by the CLI's subcommands.
#pragma once

#include <cstdint>
#include <string>

#include "ffnshape/config/model_config.h"  // describe_shape

namespace ffnshape::cli {

// 6738415616 -> "6,738,415,616"
std::string with_commas(int64_t value);
// 5.43e9 -> "5.43 G"
std::string human(double value);

}  // namespace ffnshape::cli
