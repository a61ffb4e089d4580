#pragma once
// A fixed pool of threads running jobs, and a queue of their results for the one thread that owns
// the state. Jobs never touch the state; the owner applies results one at a time.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace dbform {

template <typename Result>
class WorkQueue {
 public:
  explicit WorkQueue(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
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

  // Waits up to `timeout` (real time) for at least one result, then returns all that are ready.
  template <typename Rep, typename Period>
  std::vector<Result> take(std::optional<std::chrono::duration<Rep, Period>> timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [this] { return !results_.empty(); };
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
      Result r = job();
      {
        std::lock_guard<std::mutex> lock(mu_);
        results_.push_back(std::move(r));
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
  std::vector<std::thread> threads_;
};

}  // namespace dbform
