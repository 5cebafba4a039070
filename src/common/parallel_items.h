// Internal: a loop over independent items on a few threads, for work whose items differ in cost
// (documents of any length): each thread takes the next index from a shared counter. The first
// exception stops the others from taking more and is rethrown to the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ffnshape {

// Calls fn(i) for every i in [0, count) on min(threads, count) threads (at least 1), the caller's
// among them.
template <class Fn>
void for_each_item_parallel(size_t count, int threads, Fn&& fn) {
  const auto workers = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, std::max<size_t>(count, 1));
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    try {
      for (size_t i = next++; i < count; i = next++) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ffnshape
