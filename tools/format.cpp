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

std::string describe_shape(const ModelConfig& m) {
  std::string ffn = m.ffn.kind == FfnKind::conventional ? "conventional d_ff " : "hourglass K=" + std::to_string(m.ffn.k) + " d_h ";
  ffn += m.ffn.widths.empty() ? std::to_string(m.ffn_uniform_hidden()) : "per-layer";
  return std::string(to_string(m.family)) + ", " + ffn + ", d_model " + std::to_string(m.d_model) + ", " +
         std::to_string(m.n_layers) + " layers, attention " + std::to_string(m.n_heads) + "x" +
         std::to_string(m.attn_head_dim()) + " (kv " + std::to_string(m.kv_heads()) + ")";
}

}  // namespace ffnshape::cli
