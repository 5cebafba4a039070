#include "format.h"

#include <cstdio>

namespace ffnshape::cli {

std::string with_commas(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return value < 0 ? "-" + digits : digits;
}

std::string human(double value) {
  const char* units[] = {"", " K", " M", " G", " T", " P"};
  int unit = 0;
  while (value >= 1000.0 && unit < 5) {
    value /= 1000.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%s", value, units[unit]);
  return text;
}

}  // namespace ffnshape::cli
