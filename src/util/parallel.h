#pragma once
// Runs independent pieces of work side by side.
#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace dbform {

// Calls work(i) for every i in [0, count) on at most `threads` threads (the caller's among them).
// Should a call throw, the first exception (by i) is rethrown once every call has finished.
template <typename Work>
void for_each_in_parallel(size_t count, size_t threads, Work work) {
  std::vector<std::exception_ptr> failures(count);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        work(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  threads = std::clamp<size_t>(threads, 1, std::max<size_t>(count, 1));
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    try {
      helpers.emplace_back(worker);
    } catch (const std::system_error&) {  // no more threads to be had: the ones started do the rest
      break;
    }
  }
  worker();
  for (auto& h : helpers) h.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// The same, returning work(i)'s results in the order of i.
template <typename Result, typename Work>
std::vector<Result> in_parallel(size_t count, size_t threads, Work work) {
  std::vector<Result> results(count);
  for_each_in_parallel(count, threads, [&](size_t i) { results[i] = work(i); });
  return results;
}

}  // namespace dbform
