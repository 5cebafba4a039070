// Problems with data files (missing, corrupt, inconsistent with the model): the message names the
// file and says how to fix it. The CLI maps it to exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace ffnshape {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ffnshape
