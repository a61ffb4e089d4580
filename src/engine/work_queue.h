#pragma once
// A fixed pool of threads running jobs, and a queue of their results for the one thread that owns
// the state. Jobs never touch the state; the owner applies results one at a time.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <system_error>
#include <vector>

#include "util/error.h"

namespace dbform {

template <typename Result>
class WorkQueue {
 public:
  // Starts up to `threads` threads. When the system gives fewer (no memory for a stack, a limit
  // on threads), the ones started do the work; none at all is an Error, thrown before any job.
  explicit WorkQueue(int threads) {
    threads_.reserve(static_cast<size_t>(std::max(threads, 1)));
    for (int i = 0; i < threads; ++i) {
      try {
        threads_.emplace_back([this] { run(); });
      } catch (const std::system_error& e) {
        if (!threads_.empty()) break;
        throw Error(std::string("cannot start a thread to make API calls (") + e.what() +
                    "): the system is short of memory or threads. Nothing was sent");
      }
    }
  }
  ~WorkQueue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
    }
    jobs_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void submit(std::function<Result()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
      ++in_flight_;
    }
    jobs_cv_.notify_one();
  }

  int in_flight() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_flight_;
  }

  // The first job that threw (out of memory, most likely), once: its result is lost, and it no
  // longer counts as in flight. Null when none did (or it was taken already).
  std::exception_ptr take_failure() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(failure_, nullptr);
  }

  // Waits up to `timeout` (real time) for at least one result or a failure, then returns all the
  // results that are ready.
  template <typename Rep, typename Period>
  std::vector<Result> take(std::optional<std::chrono::duration<Rep, Period>> timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [this] { return !results_.empty() || failure_; };
    if (timeout) results_cv_.wait_for(lock, *timeout, ready);
    else results_cv_.wait(lock, ready);
    std::vector<Result> out(std::make_move_iterator(results_.begin()), std::make_move_iterator(results_.end()));
    results_.clear();
    in_flight_ -= static_cast<int>(out.size());
    return out;
  }

 private:
  void run() {
    for (;;) {
      std::function<Result()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        jobs_cv_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
        // Closing early (the owner threw): start nothing more. A create not sent is safe, its
        // intent is recorded; one sent whose answer nobody records is what we must not multiply.
        if (closing_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      // Jobs report their failures in their results; what still escapes (no memory for a result)
      // must not end the process: the owner hears of it and stops starting work.
      std::exception_ptr failed;
      try {
        Result r = job();
        std::lock_guard<std::mutex> lock(mu_);
        results_.push_back(std::move(r));
      } catch (...) {
        failed = std::current_exception();
      }
      if (failed) {
        std::lock_guard<std::mutex> lock(mu_);
        --in_flight_;
        if (!failure_) failure_ = failed;
      }
      results_cv_.notify_one();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable jobs_cv_, results_cv_;
  std::deque<std::function<Result()>> jobs_;
  std::deque<Result> results_;
  int in_flight_ = 0;
  bool closing_ = false;
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace dbform
