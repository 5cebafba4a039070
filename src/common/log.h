// Progress and status lines on stdout: "[2026-12-03 01:02:03.456] [info] message", formatted with
// the {fmt} headers that ship inside LibTorch (header-only, so no second fmt library can clash).
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace ffnshape::log {

// Writes one whole line (timestamp, level, message) and flushes it.
void write(std::string_view level, std::string_view message);

template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  write("info", fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  write("warning", fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  write("error", fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ffnshape::log
