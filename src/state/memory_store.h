#pragma once
// An in-memory StateStore for tests: keeps every written snapshot so a test can assert what was on
// "disk" at any moment, e.g. that an intent was recorded before the create call went out.
// Thread-safe: a FakeTransport handler may read the snapshots while the engine writes.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "state/store.h"

namespace dbform {

class MemoryStateStore : public StateStore {
 public:
  MemoryStateStore() = default;
  explicit MemoryStateStore(State initial) : current_(std::move(initial)) {}

  std::optional<State> read() override {
    std::lock_guard<std::mutex> lock(mu_);
    return current_;
  }

  void write(State& state) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (failing_writes_) throw Error("memory store: write refused (as a full disk would)");
    // The same compare-and-swap as the real stores: refuse a state not read from the stored one.
    if (current_ && (current_->serial != state.serial || current_->lineage != state.lineage))
      throw Error("memory store: the state changed since it was read (serial " + std::to_string(current_->serial) +
                  ", writing from " + std::to_string(state.serial) + ")");
    state.serial += 1;
    current_ = state;
    snapshots_.push_back(state);
  }

  std::unique_ptr<StateLock> lock(const std::string&, Duration) override { return std::make_unique<StateLock>(); }

  std::string describe() const override { return "memory"; }
  std::string command_line_args() const override { return "--state memory"; }

  // From now on every write throws, as a full disk or a lost database connection would.
  void fail_writes() {
    std::lock_guard<std::mutex> lock(mu_);
    failing_writes_ = true;
  }

  // Every state written, oldest first.
  std::vector<State> snapshots() const {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshots_;
  }

  size_t writes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshots_.size();
  }

  // The record at `address` in the last written state, if any.
  std::optional<ResourceRecord> last_record(const std::string& address) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (snapshots_.empty()) return std::nullopt;
    if (const ResourceRecord* r = snapshots_.back().find(address)) return *r;
    return std::nullopt;
  }

 private:
  mutable std::mutex mu_;
  std::optional<State> current_;
  std::vector<State> snapshots_;
  bool failing_writes_ = false;
};

}  // namespace dbform
