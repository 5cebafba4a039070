// Trainer options for tests: no console output and no signal handlers (ctest runs tests in parallel).
#pragma once

#include <string>

#include "ffnshape/train/trainer.h"

namespace ffnshape::testing {

inline TrainOptions quiet(const std::string& run_dir) {
  TrainOptions o;
  o.run_dir = run_dir;
  o.quiet = true;
  o.install_signal_handlers = false;
  return o;
}

}  // namespace ffnshape::testing
