#include "log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace ffnshape::log {

void write(std::string_view level, std::string_view message) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  static std::mutex mutex;  // lines from several threads stay whole
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stdout, "[%s.%03d] [%.*s] %.*s\n", stamp, static_cast<int>(millis), static_cast<int>(level.size()),
               level.data(), static_cast<int>(message.size()), message.data());
  std::fflush(stdout);
}

}  // namespace ffnshape::log
